// adopt(): the owner reference, namespace, name prefix and labels a child needs so that
// deleting its parent garbage-collects it. Pure.

import { expect, test } from "bun:test";
import { adopt, appendOwnerReference, label, removeOwnerReference } from "../../src/declaring/children.ts";
import type { KubeObject } from "../../src/kube/types.ts";

const owner: KubeObject = {
  apiVersion: "kobun.dev/v1", kind: "KobunExample",
  metadata: { name: "parent", namespace: "team-a", uid: "uid-1", labels: { app: "shop", tier: "gold" } },
};

test("adopt sets a controller owner reference that blocks the owner's foreground deletion", () => {
  const child = adopt({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" } }, { owner });
  expect(child.metadata.ownerReferences).toEqual([
    { apiVersion: "kobun.dev/v1", kind: "KobunExample", name: "parent", uid: "uid-1", controller: true, blockOwnerDeletion: true },
  ]);
  expect(child.metadata.namespace).toBe("team-a");
  expect(child.metadata.labels).toEqual({ app: "shop", tier: "gold" }); // copied by default, as Kopf's adopt does
  const unlabelled = adopt({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" } }, { owner, labels: false });
  expect(unlabelled.metadata.labels).toBeUndefined();
});

test("adopt gives a nameless child the owner's name as a prefix, and copies labels (the child's win)", () => {
  const all = adopt({ apiVersion: "v1", kind: "ConfigMap", metadata: { labels: { tier: "silver" } as Record<string, string> } }, { owner, labels: true });
  expect(all.metadata.generateName).toBe("parent-");
  expect(all.metadata.labels).toEqual({ app: "shop", tier: "silver" });
  const some = adopt({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "n" } }, { owner, labels: ["app"] });
  expect(some.metadata.labels).toEqual({ app: "shop" });
  expect(some.metadata.generateName).toBeUndefined();
});

test("adopting twice keeps one reference; another controller or another namespace is refused", () => {
  const child = adopt(adopt({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" } }, { owner }), { owner });
  expect(child.metadata.ownerReferences).toHaveLength(1);
  const other = { ...owner, metadata: { ...owner.metadata, uid: "uid-2", name: "other" } };
  expect(() => adopt(child, { owner: other })).toThrow(/already controlled by KobunExample parent/);
  expect(() => adopt({ metadata: { name: "x", namespace: "team-b" } }, { owner })).toThrow(/owner references do not cross namespaces/);
  expect(() => adopt({ metadata: {} }, { owner: { metadata: { name: "no-uid" } } })).toThrow(/adopt needs an owner with apiVersion, kind, metadata.name and metadata.uid/);
  expect(() => adopt({ metadata: {} }, {} as never)).toThrow(/needs \{ owner \} outside a handler; inside one, ctx.adopt\(child\)/);
});

test("appendOwnerReference adds an owner once (a non-controller one alongside a controller); removeOwnerReference takes it away", () => {
  const other: KubeObject = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "shared", uid: "uid-9" } };
  const a = { apiVersion: "v1", kind: "Secret", metadata: { name: "a" } } as KubeObject;
  const b = { apiVersion: "v1", kind: "Secret" } as KubeObject;
  appendOwnerReference([a, b], owner);
  appendOwnerReference([a, b], owner); // already there: not twice
  appendOwnerReference(a, other, { controller: false, blockOwnerDeletion: false });
  expect(a.metadata.ownerReferences).toEqual([
    { apiVersion: "kobun.dev/v1", kind: "KobunExample", name: "parent", uid: "uid-1", controller: true, blockOwnerDeletion: true },
    { apiVersion: "v1", kind: "ConfigMap", name: "shared", uid: "uid-9", controller: false, blockOwnerDeletion: false },
  ]);
  expect(b.metadata.ownerReferences).toHaveLength(1);
  expect(() => appendOwnerReference(b, other)).toThrow(/already controlled by KobunExample parent; pass \{ controller: false \}/);
  // A refusal of one object leaves the others as given: none is changed before all are checked.
  const fresh = { apiVersion: "v1", kind: "Secret", metadata: { name: "fresh" } } as KubeObject;
  expect(() => appendOwnerReference([fresh, b], other)).toThrow(/already controlled by KobunExample parent/);
  expect(fresh.metadata.ownerReferences).toBeUndefined();
  removeOwnerReference([a, b], owner);
  expect(a.metadata.ownerReferences).toEqual([expect.objectContaining({ uid: "uid-9" })]);
  expect(b.metadata.ownerReferences).toEqual([]);
  expect(() => appendOwnerReference(a, { metadata: { name: "x" } })).toThrow(/needs an owner with apiVersion/);
});

test("label keeps an object's own values unless forced, and labels the nested templates that exist", () => {
  const deployment = { apiVersion: "apps/v1", kind: "Deployment", metadata: { labels: { app: "mine" } }, spec: { template: {} } } as KubeObject;
  const job = { apiVersion: "batch/v1", kind: "Job" } as KubeObject;
  label([deployment, job], { app: "shop", tier: "gold" }, { nested: "spec.template" });
  expect(deployment.metadata.labels).toEqual({ app: "mine", tier: "gold" });
  expect((deployment.spec as any).template.metadata.labels).toEqual({ app: "shop", tier: "gold" });
  expect(job.metadata.labels).toEqual({ app: "shop", tier: "gold" });
  expect((job as any).spec).toBeUndefined(); // absent nested structures are not made
  label(deployment, { app: "forced" }, { forced: true });
  expect(deployment.metadata.labels!.app).toBe("forced");
  expect(() => label(job, null as never)).toThrow(/labels is an object/);
});
