// adopt(): the owner reference, namespace, name prefix and labels a child needs so that
// deleting its parent garbage-collects it. Pure.

import { expect, test } from "bun:test";
import { adopt } from "../../src/declaring/children.ts";
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
  expect(child.metadata.labels).toBeUndefined();
});

test("adopt gives a nameless child the owner's name as a prefix, and copies labels when asked (the child's win)", () => {
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
  expect(() => adopt({ metadata: {} }, { owner: { metadata: { name: "no-uid" } } })).toThrow(/adopt needs \{ owner \}/);
});
