// `kobun manifests` follows kobun.yaml's resources.<key>.namespaces: a resource watched in
// namespaces of its own is granted there (a Role each, with its Events), not in the global
// ones; with globs or the whole cluster, in the ClusterRole, and Namespaces are followed.

import { expect, test } from "bun:test";
import { parseAllDocuments } from "yaml";
import { renderManifests } from "../../../src/cli/manifests/manifests.ts";
import { parseConfigText, resolveSettings } from "../../../src/config/index.ts";
import { Registry } from "../../../src/declaring/registry.ts";

function documents(resources: string): any[] {
  const registry = new Registry();
  registry.on.create("v1/configmaps", () => {}, { id: "cms" });
  registry.on.create("v1/secrets", () => {}, { id: "secrets" });
  const settings = resolveSettings({ file: "kobun.yaml", fileData: parseConfigText(`peering: { standalone: true }\nnamespaces: { include: [alpha] }\nresources:\n${resources}`, "kobun.yaml") });
  const text = renderManifests({ name: "op", namespace: "ops", image: "op:1", settings, selectors: registry.selectors(), manifests: [] });
  return parseAllDocuments(text).map((d) => d.toJS());
}

const resourcesOf = (rules: any[]) => rules.flatMap((rule) => rule.resources).sort();

test("a fixed list of its own: the resource's grants and Events in a Role in each of its namespaces, the others' in the global ones", () => {
  const docs = documents("  v1/secrets: { namespaces: { include: [beta, gamma] } }");
  const roles = Object.fromEntries(docs.filter((d) => d.kind === "Role").map((d) => [d.metadata.namespace, resourcesOf(d.rules)]));
  expect(roles).toEqual({
    alpha: ["configmaps", "configmaps/status", "events"],
    beta: ["events", "secrets", "secrets/status"],
    gamma: ["events", "secrets", "secrets/status"],
  });
  expect(docs.filter((d) => d.kind === "RoleBinding").map((d) => d.metadata.namespace).sort()).toEqual(["alpha", "beta", "gamma"]);
  const cluster = docs.find((d) => d.kind === "ClusterRole");
  expect(resourcesOf(cluster?.rules ?? []).filter((r: string) => r.startsWith("secrets") || r === "namespaces")).toEqual([]);
});

test("globs of its own: the resource's grants in the ClusterRole, with list/watch of Namespaces to follow them", () => {
  const docs = documents("  v1/secrets: { namespaces: { include: [\"team-*\"] } }");
  const cluster = docs.find((d) => d.kind === "ClusterRole");
  expect(resourcesOf(cluster.rules)).toEqual(expect.arrayContaining(["events", "namespaces", "secrets", "secrets/status"]));
  expect(cluster.rules).toContainEqual({ apiGroups: [""], resources: ["namespaces"], verbs: ["list", "watch"] });
  const roles = docs.filter((d) => d.kind === "Role");
  expect(roles.map((d) => [d.metadata.namespace, resourcesOf(d.rules)])).toEqual([["alpha", ["configmaps", "configmaps/status", "events"]]]);
});
