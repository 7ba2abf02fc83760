// Issue 15: what a watcher keeps per known object between events is there only for the
// synthetic deletions of a relist. With `keep: "identity"` (the runtime's choice when no
// on.event handler reads a deleted body) it keeps the object's identity, not its body: live
// events still carry whole bodies, and a synthetic deletion carries what the reconciler's
// release of a finalizer needs (name, namespace, uid, resourceVersion, labels, finalizers).

import { afterEach, beforeEach, expect, test } from "bun:test";
import { Watcher } from "../../src/watching/watcher.ts";
import { Collector, cm, configmaps, env, type Env } from "./helpers.ts";

let e: Env;
beforeEach(async () => (e = await env()));
afterEach(() => e.stop());

/** Deletes `name` (its finalizer removed first) while nothing watches, then relists: the events. */
async function relistAfterDeleting(watcher: Watcher, name: string) {
  await e.client.patch(configmaps, "default", name, { metadata: { finalizers: null } }, { type: "merge" });
  await e.client.delete(configmaps, "default", name);
  const second = new Collector(watcher);
  await second.untilEvent("relist-done");
  await second.stop();
  return second.events;
}

const labelled = (name: string) => ({ ...cm(name, { big: "x".repeat(4096) }), metadata: { name, namespace: "default", labels: { app: "a" }, annotations: { note: "n" }, finalizers: ["kobun.dev/finalizer"] } });

for (const streamingList of ["never", "auto"] as const) {
  test(`keep "identity": known objects lose their bodies, events keep theirs, a synthetic deletion carries the identity (streaming list: ${streamingList})`, async () => {
    for (const name of ["gone", "stays"]) await e.client.create(configmaps, "default", labelled(name));
    const watcher = new Watcher(e.client, configmaps, { namespace: "default", streamingList, keep: "identity" });
    const first = new Collector(watcher);
    await first.untilEvent("relist-done");
    await e.client.patch(configmaps, "default", "stays", { data: { k: "v" } }, { type: "merge" });
    await first.untilEvent("modified", "stays");
    await first.stop(); // frozen: the deletion below is seen only by the next relist
    const listed = first.events.flatMap((ev) => ("object" in ev ? [ev.object] : []));
    expect(listed.every((o) => o.data?.big?.length === 4096)).toBe(true);
    for (const known of watcher.known.values()) {
      expect(known).not.toHaveProperty("data");
      expect(known.metadata).not.toHaveProperty("annotations");
      expect(known.metadata).not.toHaveProperty("creationTimestamp");
    }

    const stays = await e.client.get(configmaps, "default", "stays");
    const gone = await e.client.get(configmaps, "default", "gone");
    const deleted = (await relistAfterDeleting(watcher, "gone")).find((ev) => ev.type === "deleted");
    expect(deleted && "synthetic" in deleted && deleted.synthetic).toBe(true);
    expect(deleted && "object" in deleted && deleted.object).toEqual({
      apiVersion: "v1", kind: "ConfigMap",
      metadata: { name: "gone", namespace: "default", uid: gone.metadata.uid, resourceVersion: gone.metadata.resourceVersion, labels: { app: "a" }, finalizers: ["kobun.dev/finalizer"] },
    });
    expect(watcher.known.get(stays.metadata.uid!)?.metadata.resourceVersion).toBe(stays.metadata.resourceVersion);
  });
}

test("by default the whole body of a known object is kept (a synthetic deletion carries it)", async () => {
  await e.client.create(configmaps, "default", labelled("gone"));
  const watcher = new Watcher(e.client, configmaps, { namespace: "default", streamingList: "never" });
  const first = new Collector(watcher);
  await first.untilEvent("relist-done");
  await first.stop();
  const deleted = (await relistAfterDeleting(watcher, "gone")).find((ev) => ev.type === "deleted");
  expect(deleted && "object" in deleted && deleted.object.data?.big?.length).toBe(4096);
  expect(deleted && "object" in deleted && deleted.object.metadata.annotations).toEqual({ note: "n" });
});
