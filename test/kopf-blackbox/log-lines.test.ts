// Kopf's own log lines, which Kopf users read and grep (Kopf's e2e, tests/e2e/test_examples.py, looks
// for "Adding the finalizer", "Creation is in progress:", "Deletion is in progress:" and "Deleted,
// really deleted"): a cause's progress at debug level, its summary ("Creation is processed: 1
// succeeded; 0 failed.") at info, the finalizer's steps at debug. Never an object's body.

import { expect, test } from "bun:test";
import { PermanentError, Registry } from "kobun";
import { startOperator, type TestOperator } from "kobun/testing";
import { KopfExamples, sampleObject } from "../../examples/kopf/kopf.ts";
import { CRD } from "../../examples/kopf/testing.ts";

const NAME = "kopf-example-1";

/** The lines of `lines` that are Kopf's cause and finalizer lines, their message only, in order. */
function kopfLines(lines: readonly string[]): string[] {
  const kopf = /(\w+ is in progress: resourceVersion|\w+ is processed: .*?\.|Adding the finalizer.*?\.|Removing the finalizer.*?\.|Deleted, really deleted.*?\.|Handler '\w+' (?:succeeded|failed permanently))/;
  return lines.flatMap((line) => {
    const found = kopf.exec(line)?.[1];
    return found ? [found] : [];
  });
}

/** An operator of `registry` on the KopfExample CRD, its lines kept from `logCapture` on. */
const started = (registry: Registry, logCapture: "debug" | "info" = "debug") =>
  startOperator({ registry, crds: [CRD], logLevel: "silent", logCapture, timeout: 10_000 });

/** The sample's spec changed, once `line` says the change was taken up. */
async function changed(kit: TestOperator, line: string): Promise<void> {
  await kit.apply(KopfExamples, { ...sampleObject(), spec: { ...sampleObject().spec, field: "changed" } });
  await kit.logs.until(line, { timeout: 15_000 });
}

/** The sample deleted, gone, and its deletion told by the watch. */
async function deleted(kit: TestOperator): Promise<void> {
  await kit.delete(KopfExamples, NAME);
  await kit.gone(KopfExamples, NAME);
  await kit.logs.until("Deleted, really deleted, and we are notified.", { timeout: 15_000 });
}

test("a create, an update and a deletion log Kopf's lines, in Kopf's order", async () => {
  const registry = new Registry();
  registry.on.create(KopfExamples, () => ({ message: "created" }), { id: "create_fn" });
  registry.on.update(KopfExamples, () => {}, { id: "update_fn" });
  registry.on.delete(KopfExamples, () => {}, { id: "delete_fn" });
  await using kit = await started(registry);
  await kit.apply(KopfExamples, sampleObject());
  await kit.logs.until("Creation is processed: 1 succeeded; 0 failed.", { timeout: 15_000 });
  await changed(kit, "Updating is processed: 1 succeeded; 0 failed.");
  await deleted(kit);
  expect(kopfLines(kit.logs.lines)).toEqual([
    "Adding the finalizer, thus preventing the actual deletion.",
    "Creation is in progress: resourceVersion",
    "Handler 'create_fn' succeeded",
    "Creation is processed: 1 succeeded; 0 failed.",
    "Updating is in progress: resourceVersion",
    "Handler 'update_fn' succeeded",
    "Updating is processed: 1 succeeded; 0 failed.",
    "Deletion is in progress: resourceVersion",
    "Handler 'delete_fn' succeeded",
    "Deletion is processed: 1 succeeded; 0 failed.",
    "Removing the finalizer, thus allowing the actual deletion.",
    "Deleted, really deleted, and we are notified.",
  ]);
  // The object's content is never in them (Kopf prints the body; kobun names the version).
  expect(kit.logs.lines.filter((l) => l.includes("is in progress") && l.includes("item1"))).toEqual([]);
}, 30_000);

test("a cause whose handler failed for good is processed with its failure counted", async () => {
  const registry = new Registry();
  registry.on.create(KopfExamples, () => ({ message: "fine" }), { id: "fine_fn" });
  registry.on.create(KopfExamples, () => {
    throw new PermanentError("no such thing");
  }, { id: "broken_fn" });
  await using kit = await started(registry, "info");
  await kit.apply(KopfExamples, sampleObject());
  await kit.logs.until("Creation is processed: 1 succeeded; 1 failed.", { timeout: 15_000 });
  expect(kopfLines(kit.logs.lines).filter((l) => l.includes("processed"))).toEqual(["Creation is processed: 1 succeeded; 1 failed."]);
}, 30_000);

test("a finalizer no handler needs any more is removed with Kopf's line", async () => {
  const registry = new Registry();
  registry.on.create(KopfExamples, () => {}, { id: "create_fn" });
  await using kit = await started(registry);
  // Held by kobun's finalizer from an earlier operator that had a delete handler.
  await kit.apply(KopfExamples, { ...sampleObject(), metadata: { ...sampleObject().metadata, finalizers: ["kobun.dev/finalizer"] } });
  await kit.until(KopfExamples, NAME, (o) => !o.metadata.finalizers?.includes("kobun.dev/finalizer"), { timeout: 15_000 });
  await kit.logs.until("Removing the finalizer, as there are no handlers requiring it.", { timeout: 15_000 });
}, 30_000);

test("a change no handler is for logs its progress only, never 'processed: 0 succeeded; 0 failed.' (Kopf's skip)", async () => {
  const registry = new Registry();
  registry.on.create(KopfExamples, () => {}, { id: "create_fn" });
  await using kit = await started(registry);
  await kit.apply(KopfExamples, sampleObject());
  await kit.logs.until("Creation is processed: 1 succeeded; 0 failed.", { timeout: 15_000 });
  await changed(kit, "Updating is in progress: resourceVersion");
  await deleted(kit); // the next cause's line: the update's cycle is over, whatever it logged
  expect(kopfLines(kit.logs.lines).filter((l) => l.includes("processed"))).toEqual([
    "Creation is processed: 1 succeeded; 0 failed.",
  ]);
}, 30_000);

test("a deletion a daemon held is released with Kopf's deletion line, not the no-handlers one", async () => {
  const registry = new Registry();
  registry.on.daemon(KopfExamples, async ({ signal }) => {
    await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
  }, { id: "daemon_fn" });
  await using kit = await started(registry);
  await kit.apply(KopfExamples, sampleObject());
  await kit.until(KopfExamples, NAME, (o) => o.metadata.finalizers?.includes("kobun.dev/finalizer") ?? false, { timeout: 15_000 });
  await kit.delete(KopfExamples, NAME);
  await kit.gone(KopfExamples, NAME);
  await kit.logs.until("Removing the finalizer, thus allowing the actual deletion.", { timeout: 15_000 });
  expect(kopfLines(kit.logs.lines)).toEqual([
    "Adding the finalizer, thus preventing the actual deletion.",
    "Removing the finalizer, thus allowing the actual deletion.",
  ]);
}, 30_000);
