// The sandbox's garbage collector (kube-controller-manager's, for ownerReferences): a parent's
// deletion removes its children in the background by default; Foreground deletes them first
// and keeps the parent (deletionTimestamp, finalizer foregroundDeletion) until they are gone;
// Orphan leaves them, without the reference; a child with another live owner keeps living.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { startSandbox, type Sandbox } from "../src/index.ts";
import { api, CM, WatchReader } from "./helpers.ts";

let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox();
});
afterAll(() => sb.stop());

let n = 0;
async function family(children = 2, blockOwnerDeletion = true) {
  n++;
  const parent = (await api(sb, "POST", CM, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `parent-${n}` } })).body;
  const ref = { apiVersion: "v1", kind: "ConfigMap", name: parent.metadata.name, uid: parent.metadata.uid, controller: true, blockOwnerDeletion };
  const names: string[] = [];
  for (let i = 0; i < children; i++) {
    const r = await api(sb, "POST", CM, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `child-${n}-${i}`, ownerReferences: [ref] } });
    expect(r.status).toBe(201);
    names.push(r.body.metadata.name);
  }
  return { parent, ref, names };
}

/** Deletes `name` with `policy` and returns the names deleted, in order, as a watch saw them, until `last` is gone. */
async function deleteAndWatch(name: string, policy: string | undefined, last: string): Promise<string[]> {
  const rv = sb.store.resourceVersion();
  const watch = await WatchReader.open(sb, `${CM}?watch=1&resourceVersion=${rv}`);
  try {
    const body = policy ? { kind: "DeleteOptions", apiVersion: "v1", propagationPolicy: policy } : undefined;
    expect((await api(sb, "DELETE", `${CM}/${name}`, body)).status).toBe(200);
    const deleted: string[] = [];
    while (!deleted.includes(last)) {
      const ev = await watch.next(5000);
      if (!ev) throw new Error(`the watch ended before ${last} was deleted; deleted: ${deleted.join(", ")}`);
      if (ev.type === "DELETED") deleted.push(ev.object.metadata.name);
    }
    return deleted;
  } finally {
    watch.ac.abort();
  }
}

const get = (name: string) => sb.store.get("", "configmaps", "default", name);

test("deleting a parent deletes its children in the background, after the parent", async () => {
  const { parent, names } = await family(2);
  const deleted = await deleteAndWatch(parent.metadata.name, undefined, names[1]!);
  expect(deleted[0]).toBe(parent.metadata.name);
  expect(deleted.sort()).toEqual([parent.metadata.name, ...names].sort());
});

test("Foreground: the parent stays with foregroundDeletion until its blocking children are gone, then goes last", async () => {
  const { parent, names } = await family(2);
  const deleted = await deleteAndWatch(parent.metadata.name, "Foreground", parent.metadata.name);
  expect(deleted.slice(-1)).toEqual([parent.metadata.name]);
  expect(deleted.slice(0, -1).sort()).toEqual(names);
});

test("Orphan: the children stay, without their reference to the parent", async () => {
  const { parent, names } = await family(1);
  await deleteAndWatch(parent.metadata.name, "Orphan", parent.metadata.name);
  expect(get(names[0]!).metadata.ownerReferences ?? []).toEqual([]);
});

test("a child with another live owner is kept; only the dangling reference goes", async () => {
  const a = await family(0);
  const b = await family(0);
  const shared = (await api(sb, "POST", CM, {
    apiVersion: "v1", kind: "ConfigMap", metadata: { name: `shared-${n}`, ownerReferences: [a.ref, { ...b.ref, controller: false }] },
  })).body;
  const watch = await WatchReader.open(sb, `${CM}?watch=1&resourceVersion=${sb.store.resourceVersion()}`);
  try {
    expect((await api(sb, "DELETE", `${CM}/${a.parent.metadata.name}`)).status).toBe(200);
    let ev: any;
    do ev = await watch.next(5000);
    while (ev && !(ev.type === "MODIFIED" && ev.object.metadata.name === shared.metadata.name));
    expect(ev.object.metadata.ownerReferences.map((r: any) => r.uid)).toEqual([b.parent.metadata.uid]);
  } finally {
    watch.ac.abort();
  }
  expect(get(shared.metadata.name)).toBeDefined();
});

test("an unknown propagationPolicy is refused with the real server's message", async () => {
  const { parent } = await family(0);
  const r = await api(sb, "DELETE", `${CM}/${parent.metadata.name}`, { kind: "DeleteOptions", apiVersion: "v1", propagationPolicy: "Sideways" });
  expect(r.status).toBe(422);
  expect(r.body.message).toBe('DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"');
});
