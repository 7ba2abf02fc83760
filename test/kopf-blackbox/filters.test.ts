// filters.md: a predicate or `when` is the user's code, called with the handler's context. One
// that throws fails the object's cycle (retried with the object's backoff); the error logged must
// say whose filter it was, not only the predicate's own message.

import { expect, test } from "bun:test";
import { Registry } from "kobun";
import { startOperator } from "kobun/testing";

test("a `when` that throws is logged naming its handler", async () => {
  const registry = new Registry();
  registry.on.create("v1/configmaps", () => {}, { id: "fragile", when: ({ spec }) => spec.nested.deep === 1 });
  await using kit = await startOperator({ registry, logLevel: "info", timeout: 15_000 });
  await kit.apply("v1/configmaps", { metadata: { name: "f" }, data: {} });
  await kit.logs.until(/could not process the object.*a filter of 'fragile' \(labels, annotations, value or when\) threw: /);
}, 30_000);

// Kopf's filters.rst, "Stealth mode": an object that no handler of its resource matches (by labels,
// annotations, field value or when) is not handled at all: no diff base is stored on it, so once it
// comes to match (a label added), it is seen as created, and the create handlers run, not the update ones.
test("an object no handler matches gets no diff base: matching later is a creation (Kopf's stealth mode)", async () => {
  const registry = new Registry();
  const ran: string[] = [];
  const labels = { team: "ours" };
  registry.on.create("v1/configmaps", ({ name, reason }) => void ran.push(`${name}:${reason}`), { id: "made", labels });
  registry.on.update("v1/configmaps", ({ name, reason }) => void ran.push(`${name}:${reason}`), { id: "changed", labels });
  // Never matches; tells the test that the cycle of the unlabelled object has chosen its handlers
  // (the cycle that, before, stored a diff base on it: nothing of that object is written now to wait for).
  const asked = Promise.withResolvers<void>();
  registry.on.create("v1/configmaps", () => {}, { id: "asked", when: () => (asked.resolve(), false) });
  await using kit = await startOperator({ registry, logLevel: "silent", timeout: 15_000 });
  await kit.apply("v1/configmaps", { metadata: { name: "quiet" }, data: { a: "1" } });
  await asked.promise;
  await kit.apply("v1/configmaps", { metadata: { name: "quiet", labels }, data: { a: "1" } });
  await kit.until("v1/configmaps", "quiet", () => ran.length > 0 || undefined);
  expect(ran).toEqual(["quiet:create"]);
}, 30_000);

// Kopf's handlers.rst reacts to a Job's status with `@kopf.on.update('batch/v1', 'jobs', field='status')`: Kopf
// adds a handler's field to the essence it compares. kobun's essence holds no status (nor metadata but labels and
// annotations), so such an update or field handler could never run: it is refused where it registers, not kept silent.
test("an update or field handler on a field no change can touch (status, metadata.finalizers) is refused", () => {
  const registry = new Registry();
  expect(() => registry.on.update("batch/v1/jobs", () => {}, { id: "job_status", field: "status" }))
    .toThrow(/update handler job_status: field "status" .*never .*on\.event.*on\.reconcile/);
  expect(() => registry.on.field("v1/pods", { id: "phase", field: "status.phase" }, () => {}))
    .toThrow(/field handler phase: field "status.phase"/);
  expect(() => registry.on.update("v1/pods", () => {}, { id: "fin", field: "metadata.finalizers" }))
    .toThrow(/field "metadata.finalizers"/);
  // What a change can touch, and the handlers that check the object as it is, are taken.
  registry.on.update("v1/pods", () => {}, { id: "labels", field: "metadata.labels.app" });
  registry.on.create("v1/pods", () => {}, { id: "running", field: "status.phase", value: "Running" });
  registry.on.daemon("v1/pods", async () => {}, { id: "watchful", field: "status.phase" });
});
