// docs/children.md as a user reads it: adopt's defaults (owner reference, namespace, generateName,
// labels), its refusals, label's `forced`/`nested`, owner references as Kopf's, conditions'
// lastTransitionTime, and event.exception's reason (the error's class) posted from a handler.

import { expect, test } from "bun:test";
import {
  adopt, appendOwnerReference, conditions, label, Registry, removeOwnerReference, resource, type KubeObject,
} from "kobun";
import { startOperator } from "kobun/testing";
import { within } from "./helpers.ts";

const owner = {
  apiVersion: "kobun.dev/v1", kind: "KobunExample",
  metadata: { name: "site", namespace: "team-a", uid: "u-1", labels: { app: "web", tier: "gold" } },
};

test("adopt: a controller reference blocking deletion, the owner's namespace, generateName and labels (the child's win)", () => {
  const child = adopt({ apiVersion: "v1", kind: "ConfigMap", metadata: { labels: { tier: "mine" } } }, { owner });
  expect(child.metadata.namespace).toBe("team-a");
  expect(child.metadata.generateName).toBe("site-");
  expect(child.metadata.labels).toEqual({ app: "web", tier: "mine" });
  expect(child.metadata.ownerReferences).toEqual([
    { apiVersion: "kobun.dev/v1", kind: "KobunExample", name: "site", uid: "u-1", controller: true, blockOwnerDeletion: true },
  ]);
  expect(adopt({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x" } }, { owner, labels: ["app"] }).metadata.labels)
    .toEqual({ app: "web" });
  expect(adopt({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x" } }, { owner, labels: false }).metadata.labels ?? {})
    .toEqual({});
});

test("adopt refuses a child in another namespace and a second controller, naming the objects", () => {
  const elsewhere = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x", namespace: "team-b" } };
  expect(() => adopt(elsewhere, { owner })).toThrow(/team-b|team-a/);
  const other = { ...owner, metadata: { ...owner.metadata, name: "other", uid: "u-2" } };
  const owned = adopt({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x" } }, { owner });
  expect(() => adopt(owned, { owner: other })).toThrow(/site|other/);
});

test("appendOwnerReference refuses an owner in another namespace too; a cluster-scoped owner owns in any namespace", () => {
  const elsewhere: KubeObject = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x", namespace: "team-b" } };
  expect(() => appendOwnerReference(elsewhere, owner, { controller: false })).toThrow(/team-a\/site cannot own x in namespace team-b/);
  expect(elsewhere.metadata?.ownerReferences).toBeUndefined();
  const cluster = { apiVersion: "v1", kind: "Namespace", metadata: { name: "team-a", uid: "u-ns" } };
  expect(adopt({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x", namespace: "team-b" } }, { owner: cluster })
    .metadata.ownerReferences?.[0]?.uid).toBe("u-ns");
  appendOwnerReference(elsewhere, cluster);
  expect(elsewhere.metadata?.ownerReferences?.[0]?.uid).toBe("u-ns");
});

test("ctx.api refuses a cluster-scoped child of a namespaced owner (the collector would never delete it), naming both", async () => {
  const registry = new Registry();
  const outcome = Promise.withResolvers<string>();
  registry.on.create("v1/configmaps", async ({ adopt, api }) => {
    try {
      await api.create(adopt({ apiVersion: "v1", kind: "Namespace", metadata: { name: "site-tenant" } }));
      outcome.resolve("created");
    } catch (error) {
      outcome.resolve(String(error));
    }
  }, { id: "tenant", children: ["namespaces"] });
  await using kit = await startOperator({ registry, logLevel: "silent", timeout: 15_000 });
  await kit.apply("v1/configmaps", { metadata: { name: "site" } });
  expect(await within(outcome.promise, 10_000, "the handler's create"))
    .toMatch(/api\.create: Namespace site-tenant is cluster-scoped and cannot be owned by ConfigMap site, which is namespaced/);
  expect(await kit.get(resource.namespaces, "site-tenant")).toBeUndefined();
}, 30_000);

test("the sandbox collects as a cluster does: a cluster-scoped child of a namespaced owner is left, its other child goes", async () => {
  await using kit = await startOperator({ registry: new Registry(), logLevel: "silent", timeout: 10_000 });
  const parent = await kit.apply("v1/configmaps", { metadata: { name: "parent" } });
  const ref = { apiVersion: "v1", kind: "ConfigMap", name: "parent", uid: parent.metadata.uid!, controller: true };
  await kit.apply(resource.namespaces, { metadata: { name: "parent-tenant", ownerReferences: [ref] } });
  await kit.apply("v1/configmaps", { metadata: { name: "parent-child", ownerReferences: [ref] } });
  await kit.delete("v1/configmaps", "parent");
  await kit.gone("v1/configmaps", "parent-child");          // the collector has dealt with the owner's dependents
  expect((await kit.get(resource.namespaces, "parent-tenant"))?.metadata.name).toBe("parent-tenant");
}, 30_000);

test("an operator owns a PersistentVolumeClaim: created adopted, read back with the server's defaults, collected with its owner", async () => {
  const registry = new Registry();
  registry.on.create("v1/configmaps", async ({ adopt, api }) => {
    await api.create(adopt({
      apiVersion: "v1", kind: "PersistentVolumeClaim",
      metadata: { name: "site-data" }, spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
    }));
  }, { id: "volume", children: ["persistentvolumeclaims"] });
  await using kit = await startOperator({ registry, logLevel: "silent", timeout: 15_000 });
  const owner = await kit.apply("v1/configmaps", { metadata: { name: "site" } });
  const claim = await kit.until(resource.persistentvolumeclaims, "site-data", (o) => o.metadata.ownerReferences?.length);
  expect(claim.metadata.ownerReferences?.[0]).toMatchObject({ kind: "ConfigMap", name: "site", uid: owner.metadata.uid, controller: true });
  // what kube-apiserver gives a new claim: its volumeMode, the pvc-protection finalizer, a Pending status
  expect([claim.spec?.volumeMode, claim.metadata.finalizers, claim.status]).toEqual(["Filesystem", ["kubernetes.io/pvc-protection"], { phase: "Pending" }]);
  await kit.delete("v1/configmaps", "site");
  // no Pod mounts it: the finalizer goes (pvc-protection's part), then the claim
  await kit.gone(resource.persistentvolumeclaims, "site-data");
}, 30_000);

test("label keeps an object's own values unless forced, and labels the nested template when it exists", () => {
  const job: KubeObject = { apiVersion: "batch/v1", kind: "Job", metadata: { labels: { role: "mine" } }, spec: { template: { metadata: {} } } };
  label(job, { role: "worker", team: "a" }, { nested: "spec.template" });
  expect(job.metadata?.labels).toEqual({ role: "mine", team: "a" });
  expect((job.spec as { template: { metadata: { labels: unknown } } }).template.metadata.labels).toEqual({ role: "worker", team: "a" });
  label(job, { role: "worker" }, { forced: true });
  expect(job.metadata?.labels?.role).toBe("worker");
});

test("appendOwnerReference is a controller by default (Kopf's), { controller: false } is not; remove takes it away", () => {
  const cm: KubeObject = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "shared" } };
  appendOwnerReference(cm, owner);
  expect(cm.metadata?.ownerReferences?.[0]).toMatchObject({ uid: "u-1", controller: true, blockOwnerDeletion: true });
  removeOwnerReference(cm, owner);
  expect(cm.metadata?.ownerReferences ?? []).toEqual([]);
  appendOwnerReference(cm, owner, { controller: false });
  expect(cm.metadata?.ownerReferences?.[0]?.controller).toBe(false);
});

test("conditions.set writes the whole list, keeps lastTransitionTime while the status stays, sets observedGeneration", () => {
  const object = { ...owner, metadata: { ...owner.metadata, generation: 4 }, status: {} as Record<string, unknown> };
  const first: { status: Record<string, unknown> } = { status: {} };
  conditions.set(first, { type: "Ready", status: "True", reason: "A" }, { object });
  const [ready] = first.status.conditions as { lastTransitionTime: string; observedGeneration: number }[];
  expect(ready?.observedGeneration).toBe(4);
  object.status = first.status;
  expect(conditions.isTrue(object, "Ready")).toBe(true);
  const again: { status: Record<string, unknown> } = { status: {} };
  conditions.set(again, { type: "Ready", status: "True", reason: "B" }, { object });
  expect(conditions.get({ status: again.status }, "Ready")?.lastTransitionTime).toBe(ready!.lastTransitionTime);
  expect(conditions.get({ status: again.status }, "Ready")?.reason).toBe("B");
});

test("event.exception posts the error's class as the reason and its message after the prefix; info with no message", async () => {
  const registry = new Registry();
  class OutOfStock extends Error {}
  registry.on.create("v1/configmaps", ({ event }) => {
    event.info("Accepted");
    event.exception(new OutOfStock("no more widgets"), { message: "ordering:" });
  }, { id: "tell" });
  await using kit = await startOperator({ registry, logLevel: "silent", timeout: 15_000 });
  const cm = await kit.apply("v1/configmaps", { metadata: { name: "shop" }, data: {} });
  const events = await kit.events(cm, { until: (l) => ["OutOfStock", "Accepted"].every((r) => l.some((e) => e.reason === r)) });
  const exception = events.find((e) => e.reason === "OutOfStock");
  expect(exception?.type).toBe("Warning");
  expect(exception?.message).toBe("ordering: no more widgets");
  expect(events.find((e) => e.reason === "Accepted")?.type).toBe("Normal");
}, 30_000);

test("Events as client-go's recorder posts them: identical ones counted into one, the 11th similar one combined", async () => {
  const registry = new Registry();
  registry.on.create("v1/configmaps", ({ event }) => {
    for (let i = 0; i < 3; i++) event.info("Same", "identical");
    for (let i = 0; i < 12; i++) event.info("Many", `message ${i}`);
    event.warn("Last");
  }, { id: "chatty" });
  await using kit = await startOperator({ registry, logLevel: "silent", timeout: 15_000 });
  const cm = await kit.apply("v1/configmaps", { metadata: { name: "chatty" } });
  // Posted concurrently: the combined Event may land before the last of the ten single ones, so all are awaited.
  const events = await kit.events(cm, {
    until: (l) => l.some((e) => e.reason === "Last") && l.find((e) => e.reason === "Same")?.count === 3 &&
      l.some((e) => e.message?.startsWith("(combined from similar events)") && e.count === 2) &&
      l.filter((e) => e.reason === "Many").length >= 11,
  });
  const many = events.filter((e) => e.reason === "Many");
  expect(many.length).toBe(11);                             // 10 apart, then one combined
  expect(many.at(-1)?.message).toBe("(combined from similar events): message 11");
  expect(events.filter((e) => e.reason === "Same").length).toBe(1);
}, 30_000);
