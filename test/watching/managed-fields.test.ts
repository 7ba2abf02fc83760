// Issue 15: the objects a watcher hands out and keeps carry no `metadata.managedFields`. A real
// API server puts them on every object (often larger than the rest of a small one); nothing in
// an operator reads them, and the store keeps every known object, so they were most of its
// memory. Stripped at decode time, on the LIST path, the streaming list and live watch events.

import { afterEach, beforeEach, expect, test } from "bun:test";
import type { KubeObject } from "../../src/kube/types.ts";
import { Watcher } from "../../src/watching/watcher.ts";
import { Collector, cm, configmaps, env, type Env } from "./helpers.ts";

let e: Env;
beforeEach(async () => (e = await env()));
afterEach(() => e.stop());

const managed = [{ manager: "kubectl", operation: "Update", apiVersion: "v1", fieldsType: "FieldsV1", fieldsV1: { "f:data": { "f:k": {} } } }];
const withManagedFields = (name: string): KubeObject => ({ ...cm(name, { k: "v" }), metadata: { name, namespace: "default", managedFields: managed } });

for (const streamingList of ["never", "auto"] as const) {
  test(`listed, added and modified objects come without managedFields, and are known without them (streaming list: ${streamingList})`, async () => {
    await e.client.create(configmaps, "default", withManagedFields("before"));
    expect((await e.client.get(configmaps, "default", "before")).metadata.managedFields).toHaveLength(1); // the server keeps them
    const watcher = new Watcher(e.client, configmaps, { namespace: "default", streamingList });
    const c = new Collector(watcher);
    try {
      await c.untilEvent("relist-done");
      await e.client.create(configmaps, "default", withManagedFields("after"));
      await e.client.patch(configmaps, "default", "before", { data: { k: "w" }, metadata: { managedFields: managed } }, { type: "merge" });
      await c.untilEvent("modified", "before");
      await c.untilEvent("added", "after");
      const objects = c.events.flatMap((ev) => ("object" in ev ? [ev.object] : []));
      expect(objects.map((o) => o.metadata.name).sort()).toEqual(["after", "before", "before"]);
      for (const object of [...objects, ...watcher.known.values()]) expect(object.metadata).not.toHaveProperty("managedFields");
      expect(objects.find((o) => o.metadata.name === "after")?.data).toEqual({ k: "v" });
    } finally {
      await c.stop();
    }
  });
}
