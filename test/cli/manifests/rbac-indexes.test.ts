// `kobun manifests` grants what indexes watch (issue 13): a resource only an index reads gets
// get/list/watch where the handled objects are, never patch; one also handled keeps its grant.

import { expect, test } from "bun:test";
import { parseAllDocuments } from "yaml";
import { renderManifests } from "../../../src/cli/manifests/manifests.ts";
import { resolveSettings } from "../../../src/config/index.ts";
import { Registry } from "../../../src/declaring/registry.ts";

function rules(registry: Registry): any[] {
  const text = renderManifests({
    name: "op", namespace: "ops", image: "op:1", settings: resolveSettings({ flags: { standalone: true, namespaces: ["team-a"] } }),
    selectors: registry.selectors(), watched: registry.watchedOnly(), children: registry.children(), manifests: [],
  });
  const role = parseAllDocuments(text).map((d) => d.toJS()).find((d) => d.kind === "Role");
  return role.rules;
}

test("a resource only an index reads is granted get/list/watch, not patch; a handled one keeps get/list/watch/patch", () => {
  const registry = new Registry();
  registry.on.create("kobunexamples.kobun.dev/v1", () => {}, { id: "a" });
  registry.on.index("v1/pods", ({ name }) => ({ [name]: true }), { id: "pods" });
  registry.on.index("kobunexamples.kobun.dev/v1", ({ name }) => ({ [name]: true }), { id: "examples" });
  expect(registry.watchedOnly()).toEqual(["v1/pods"]);
  const granted = rules(registry);
  expect(granted).toContainEqual({ apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch"] });
  expect(granted.some((r) => r.resources.includes("pods/status"))).toBe(false);
  expect(granted).toContainEqual({ apiGroups: ["kobun.dev"], resources: ["kobunexamples"], verbs: ["get", "list", "watch", "patch"] });
});
