// Kopf's 01-minimal: "return {'message': 'hello world'}  # will be the new status". Kopf stores a
// handler's, a daemon's and a timer's result at status.<id> unless it is None; a Kopf user's
// `return None` is `return null` (or nothing) here, and must leave status.<id> as it was, not
// delete it (a merge patch's null would: a flapping timer result, a stacked create/update pair).

import { expect, test } from "bun:test";
import { Registry } from "kobun";
import { startOperator } from "kobun/testing";
import { KopfExamples, sampleObject } from "../../examples/kopf/kopf.ts";
import { CRD } from "../../examples/kopf/testing.ts";

const NAME = "kopf-example-1";

test("a handler returning null stores nothing: the create handler's result under the same id stays", async () => {
  const registry = new Registry();
  registry.on.create(KopfExamples, () => ({ message: "hello world" }), { id: "create_fn" });
  registry.on.update(KopfExamples, () => null, { id: "create_fn" }); // Kopf's stacked decorators: one id
  await using kit = await startOperator({ registry, crds: [CRD], logLevel: "info", timeout: 10_000 });
  await kit.apply(KopfExamples, sampleObject());
  await kit.until(KopfExamples, NAME, (o) => o.status?.create_fn);
  await kit.apply(KopfExamples, { ...sampleObject(), spec: { field: "changed" } });
  const after = await kit.until(KopfExamples, NAME, (o) => o.status?.kobun?.lastHandledConfiguration?.includes("changed"));
  expect(after.status?.create_fn).toEqual({ message: "hello world" });
}, 30_000);

test("a timer returning null stores nothing: its last result stays", async () => {
  const registry = new Registry();
  let calls = 0;
  registry.on.timer(KopfExamples, () => (++calls === 1 ? { healthy: true } : null), { id: "probe", interval: 0.05 });
  await using kit = await startOperator({ registry, crds: [CRD], logLevel: "info", logCapture: "debug", timeout: 10_000 });
  await kit.apply(KopfExamples, sampleObject());
  await kit.until(KopfExamples, NAME, (o) => o.status?.probe);
  await kit.consistently(KopfExamples, NAME, (o) => o?.status?.probe?.healthy === true, { for: 400 });
  expect(calls).toBeGreaterThan(2);
}, 30_000);

test("a daemon returning null stores nothing: what is at status.<id> stays", async () => {
  const registry = new Registry();
  registry.on.daemon(KopfExamples, async ({ stopped }) => {
    await new Promise((resolve) => stopped.addEventListener("abort", resolve, { once: true }));
    return null;
  }, { id: "watcher", labels: { watched: "yes" }, cancellationBackoff: 5 }); // its return is written
  await using kit = await startOperator({ registry, crds: [CRD], logLevel: "info", timeout: 10_000 });
  const labelled = { ...sampleObject(), metadata: { name: NAME, labels: { watched: "yes" } } };
  await kit.apply(KopfExamples, labelled);
  await kit.patchStatus(KopfExamples, NAME, { watcher: { seen: 1 } });
  await kit.apply(KopfExamples, { ...labelled, metadata: { name: NAME, labels: { watched: "no" } } }); // stops it
  await kit.logs.until("Daemon 'watcher' succeeded.");
  await kit.consistently(KopfExamples, NAME, (o) => o?.status?.watcher?.seen === 1, { for: 300 });
}, 30_000);

test("05-handlers' field_fn: Kopf's id gets the field (field_fn/spec.field), kobun's is the function's name", async () => {
  const registry = new Registry();
  registry.on.field(KopfExamples, { field: "spec.field" }, function field_fn({ new: now }) { return { now }; });
  registry.on.create(KopfExamples, () => 1, { id: "create_fn.spec.field", field: "spec.field" }); // Kopf's id, dotted
  expect(() => registry.on.create(KopfExamples, () => {}, { id: "create_fn/spec.field" })).toThrow(/\//);
  await using kit = await startOperator({ registry, crds: [CRD], logLevel: "info", timeout: 10_000 });
  await kit.apply(KopfExamples, sampleObject());
  const done = await kit.until(KopfExamples, NAME, (o) => o.status?.kobun?.lastHandledConfiguration);
  expect(done.status?.field_fn).toEqual({ now: "value" });
  expect(done.status?.["create_fn.spec.field"]).toBe(1);
  await kit.logs.until("Handler 'field_fn' succeeded.");
}, 30_000);
