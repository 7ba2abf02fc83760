// `kobun manifests` for sharded replicas: the Deployment runs N of them, a PodDisruptionBudget
// evicts them one at a time, a Role grants the shard Leases in the operator's namespace, and the
// sharding settings reach `kobun run` through the mounted kobun.yaml.

import { expect, test } from "bun:test";
import { parse, parseAllDocuments } from "yaml";
import { parseRunFlags, resolveSettings } from "../../../src/config/index.ts";
import { renderManifests } from "../../../src/cli/manifests/manifests.ts";

function render(args: string[]): any[] {
  const settings = resolveSettings({ flags: parseRunFlags(args).flags });
  const text = renderManifests({ name: "op", namespace: "ops", image: "example/op:1", settings, selectors: ["v1/configmaps"], manifests: [] });
  return parseAllDocuments(text).map((d) => d.toJS());
}

test("--replicas 3: a Deployment of 3, a PodDisruptionBudget of one at a time, Lease RBAC in the operator's namespace, sharding carried in kobun.yaml", () => {
  const docs = render(["-n", "apps", "--replicas", "3", "--shards", "12"]);
  expect(docs.find((d) => d.kind === "Deployment").spec.replicas).toBe(3);
  expect(docs.find((d) => d.kind === "PodDisruptionBudget")).toEqual({
    apiVersion: "policy/v1", kind: "PodDisruptionBudget", metadata: { name: "op", namespace: "ops" },
    spec: { maxUnavailable: 1, selector: { matchLabels: { app: "op" } } },
  });
  const role = docs.find((d) => d.kind === "Role" && d.metadata.name === "op-lease");
  expect(role.metadata.namespace).toBe("ops");
  expect(role.rules).toContainEqual({ apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "list", "watch", "create", "update", "delete"] });
  const file = parse(docs.find((d) => d.kind === "ConfigMap").data["kobun.yaml"]);
  expect(file.sharding).toEqual({ replicas: 3, shards: 12 });
  expect(resolveSettings({ fileData: file }).sharding).toEqual({ replicas: 3, shards: 12, key: "uid", enabled: true });
});

test("without sharding: one replica, no PodDisruptionBudget, no Lease grant", () => {
  const docs = render(["-n", "apps", "--standalone"]);
  expect(docs.find((d) => d.kind === "Deployment").spec.replicas).toBe(1);
  expect(docs.some((d) => d.kind === "PodDisruptionBudget")).toBe(false);
  expect(docs.some((d) => d.metadata?.name === "op-lease")).toBe(false);
});

test("--replicas auto starts 2", () => {
  expect(render(["-n", "apps", "--replicas", "auto"]).find((d) => d.kind === "Deployment").spec.replicas).toBe(2);
});
