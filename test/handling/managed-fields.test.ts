// Issue 15: no handler sees `metadata.managedFields`, whichever body its cycle runs on: the
// watch's (stripped at decode time) or the server's answer to kobun's own write (the run after
// the finalizer was added first). The answer's managedFields were parsed and kept: the queued
// re-run, and the Event about it, held them through a burst.

import { afterEach, expect, test } from "bun:test";
import { Registry } from "../../src/declaring/registry.ts";
import { startHarness, type Harness } from "./harness.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const managed = [{ manager: "kubectl", operation: "Update", apiVersion: "kobun.dev/v1", fieldsType: "FieldsV1", fieldsV1: { "f:spec": { "f:size": {} } } }];

test("the run after the finalizer was added gets the server's answer without managedFields", async () => {
  const seen: { managedFields: boolean; finalizers: string[] }[] = [];
  const registry = new Registry();
  registry.on.create("kobunexamples.kobun.dev/v1", ({ body }) => {
    seen.push({ managedFields: "managedFields" in body.metadata, finalizers: [...(body.metadata.finalizers ?? [])] });
    return { ok: true };
  }, { id: "create_fn" });
  registry.on.delete("kobunexamples.kobun.dev/v1", () => {}, { id: "delete_fn" }); // so the finalizer comes first
  h = await startHarness({ registry });
  await h.create("owned", { size: 1 }, { managedFields: managed });
  expect((await h.client.get(h.resource, "default", "owned")).metadata.managedFields).toHaveLength(1); // the server keeps them
  await h.until(() => h!.get("owned")?.status?.create_fn);
  // The create handler ran on the body that the finalizer PATCH returned.
  expect(seen).toEqual([{ managedFields: false, finalizers: ["kobun.dev/finalizer"] }]);
});
