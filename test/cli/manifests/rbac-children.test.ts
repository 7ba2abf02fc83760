// Handlers declare the resources they touch through ctx.api (`{ children: [...] }`), and
// `kobun manifests` grants exactly those, where the handled objects are.

import { expect, test } from "bun:test";
import { eventOnly, ownedOnly, owners, renderManifests } from "../../../src/cli/manifests/manifests.ts";
import { resolveSettings } from "../../../src/config/index.ts";
import { Registry } from "../../../src/declaring/registry.ts";
import { parseAllDocuments } from "yaml";

const FULL = ["get", "list", "watch", "create", "update", "patch", "delete"];

function roles(registry: Registry, flags: Record<string, unknown>): any[] {
  const text = renderManifests({
    name: "op", namespace: "ops", image: "op:1", settings: resolveSettings({ flags: { standalone: true, ...flags } }),
    selectors: registry.selectors(), children: registry.children(), manifests: [],
  });
  return parseAllDocuments(text).map((d) => d.toJS()).filter((d) => d.kind === "Role" || d.kind === "ClusterRole");
}

test("declared children are granted in full in each served namespace, once however many handlers declare them", () => {
  const registry = new Registry();
  registry.on.create("kobunexamples.kobun.dev/v1", () => {}, { id: "a", children: ["configmaps", "apps/v1/deployments"] });
  registry.on.update("kobunexamples.kobun.dev/v1", () => {}, { id: "b", children: ["v1/configmaps", "jobs.batch"] });
  expect(registry.children()).toEqual(["configmaps", "apps/v1/deployments", "jobs.batch"]);
  const docs = roles(registry, { namespaces: ["team-a"] });
  expect(docs.map((d) => `${d.kind}/${d.metadata.namespace}`)).toEqual(["Role/team-a"]);
  const rules = docs[0].rules.filter((r: any) => r.verbs.includes("delete"));
  expect(rules).toEqual([
    { apiGroups: [""], resources: ["configmaps"], verbs: FULL },
    { apiGroups: ["apps"], resources: ["deployments"], verbs: FULL },
    { apiGroups: ["batch"], resources: ["jobs"], verbs: FULL },
  ]);
});

test("watching cluster-wide, the children are granted by the ClusterRole; without children nothing more is", () => {
  const registry = new Registry();
  registry.on.create("kobunexamples.kobun.dev/v1", () => {}, { id: "a", children: ["secrets"] });
  const [cluster] = roles(registry, { allNamespaces: true });
  expect(cluster.kind).toBe("ClusterRole");
  expect(cluster.rules).toContainEqual({ apiGroups: [""], resources: ["secrets"], verbs: FULL });
  const plain = new Registry();
  plain.on.create("kobunexamples.kobun.dev/v1", () => {}, { id: "a" });
  expect(roles(plain, { allNamespaces: true })[0].rules.some((r: any) => r.verbs.includes("delete"))).toBe(false);
});

test("a child that is not a resource selector is refused when the handler is registered", () => {
  const registry = new Registry();
  expect(() => registry.on.create("kobunexamples.kobun.dev/v1", () => {}, { id: "a", children: ["apps//deployments"] })).toThrow(/handler a: children: cannot read resource selector/);
  expect(() => registry.on.create("kobunexamples.kobun.dev/v1", () => {}, { id: "b", children: "configmaps" as never })).toThrow(/children must be a list/);
});

/** The Role of team-a, granted as `kobun manifests` grants: indexes' resources read, event-only ones told apart. */
function servedRole(registry: Registry): any {
  const text = renderManifests({
    name: "op", namespace: "ops", image: "op:1", settings: resolveSettings({ flags: { standalone: true, namespaces: ["team-a"] } }),
    selectors: registry.selectors(), children: registry.children(), manifests: [],
    watched: registry.watchedOnly(), eventOnly: eventOnly(registry), ownedOnly: ownedOnly(registry),
    owners: owners(registry),
  });
  return parseAllDocuments(text).map((d) => d.toJS()).find((d) => d.kind === "Role");
}

test("a resource handled only by on.event and read by an index, and a child besides, is one rule: no /status nothing writes", () => {
  // The kubebuilder book's CronJob operator: Jobs are created as children, watched by an index and events.
  const registry = new Registry();
  registry.on.create("batch/v1/cronjobs", () => {}, { id: "schedule", children: ["batch/v1/jobs"] });
  registry.on.event("batch/v1/jobs", () => {}, { id: "seen" });
  registry.on.index("batch/v1/jobs", ({ name }) => ({ [name]: true }), { id: "jobs" });
  expect(eventOnly(registry)).toEqual(["batch/v1/jobs"]);
  const role = servedRole(registry);
  const batch = role.rules.filter((r: any) => r.apiGroups.includes("batch"));
  expect(batch).toEqual([
    { apiGroups: ["batch"], resources: ["cronjobs"], verbs: ["get", "list", "watch", "patch"] },
    { apiGroups: ["batch"], resources: ["cronjobs/status"], verbs: ["patch"] },
    { apiGroups: ["batch"], resources: ["cronjobs/finalizers"], verbs: ["update"] },
    { apiGroups: ["batch"], resources: ["jobs"], verbs: ["get", "list", "watch", "patch", "create", "update", "delete"] },
  ]);
});

test("a resource only on.event handles may be patched (a leftover kobun finalizer is released), never its /status", () => {
  const registry = new Registry();
  registry.on.event("v1/configmaps", () => {}, { id: "seen" });
  registry.on.index("v1/secrets", ({ name }) => ({ [name]: true }), { id: "names" });
  registry.on.create("kobunexamples.kobun.dev/v1", () => {}, { id: "a" });
  expect(eventOnly(registry)).toEqual(["v1/configmaps"]);
  const role = servedRole(registry);
  const core = role.rules.filter((r: any) => r.apiGroups.includes("") && !r.resources.includes("events"));
  expect(core).toEqual([
    { apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list", "watch", "patch"] },
    { apiGroups: [""], resources: ["secrets"], verbs: ["get", "list", "watch"] },
  ]);
});

test("the resources whose handlers make children may update their finalizers (adopt's blockOwnerDeletion needs it), and only they", () => {
  // OwnerReferencesPermissionEnforcement (OpenShift) refuses a child whose ownerReference sets
  // blockOwnerDeletion unless its writer may update the owner's finalizers: kubebuilder's
  // `memcacheds/finalizers,verbs=update`.
  const registry = new Registry();
  registry.on.reconcile("memcacheds.cache.example.com/v1alpha1", () => {}, { owns: ["apps/v1/deployments"] });
  registry.on.create("kobunexamples.kobun.dev/v1", () => {}, { id: "a" });
  const rules = servedRole(registry).rules;
  expect(rules).toContainEqual({ apiGroups: ["cache.example.com"], resources: ["memcacheds/finalizers"], verbs: ["update"] });
  // KobunExamples' handler makes no children: it names no owner, so no /finalizers (least privilege, as kubebuilder's markers).
  expect(rules.some((r: any) => r.resources[0] === "kobunexamples/finalizers")).toBe(false);
  // Deployments are only owned: granted as children, no /finalizers nor /status (kobun writes neither).
  expect(rules.filter((r: any) => r.apiGroups[0] === "apps")).toEqual([{ apiGroups: ["apps"], resources: ["deployments"], verbs: FULL }]);
  const plain = new Registry();
  plain.on.create("kobunexamples.kobun.dev/v1", () => {}, { id: "a" });
  expect(servedRole(plain).rules.some((r: any) => r.resources[0].endsWith("/finalizers"))).toBe(false);
});
