// `kobun manifests` grants where `kobun run` watches: a fixed list of namespaces that the
// operator watches cluster-wide, because a watch per namespace and resource would not fit the
// connection budget (streams/coverage.ts), needs cluster-wide list/watch, not a Role each.

import { expect, setDefaultTimeout, test } from "bun:test";
import { parseAllDocuments } from "yaml";
import { parseRunFlags, resolveSettings } from "../../../src/config/index.ts";
import { renderManifests } from "../../../src/cli/manifests/manifests.ts";

function rbacKinds(selectors: string[], args: string[]): string[] {
  const settings = resolveSettings({ flags: parseRunFlags(args).flags });
  const text = renderManifests({ name: "op", namespace: "ops", image: "example/op:1", settings, selectors, manifests: [] });
  return parseAllDocuments(text).map((d) => d.toJS()).filter((d) => /Role/.test(d.kind)).map((d) => d.kind);
}

// Rendering and parsing some hundred documents takes ~1-2 s of CPU here; a loaded 2-core
// machine made one take over 7 s.
setDefaultTimeout(30_000);

const namespaces = (count: number) => Array.from({ length: count }, (_, i) => ["-n", `ns-${i}`]).flat();
const four = ["v1/configmaps", "v1/secrets", "v1/serviceaccounts", "v1/services"];

test("4 namespaced resources in 45 fixed namespaces with a peering each: a watch each would not fit, so list/watch is granted cluster-wide", () => {
  const kinds = rbacKinds(four, namespaces(45));
  expect(kinds).toEqual(["ClusterRole", "ClusterRoleBinding"]);
});

test("4 namespaced resources in 45 fixed namespaces, standalone: 180 streams fit, so a Role in each", () => {
  const kinds = rbacKinds(four, [...namespaces(45), "--standalone"]);
  expect(kinds.filter((k) => k === "Role")).toHaveLength(45);
  expect(kinds.filter((k) => k.startsWith("Cluster"))).toEqual([]);
});

test("1 namespaced resource in 50 fixed namespaces with a peering each: the configured threshold decides, a Role in each", () => {
  const kinds = rbacKinds(["v1/configmaps"], namespaces(50));
  expect(kinds.filter((k) => k === "Role")).toHaveLength(50);
});
