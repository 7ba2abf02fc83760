// A kit after stop(), as a user meets it: a forgotten `await` on a wait, a helper that outlives `await using`,
// a kit reused by mistake. Every call says at once that the kit is stopped (before, a call after stop() met a
// bare ECONNREFUSED, and a wait, in flight or new, retried its watch against the stopped sandbox until its
// timeout, then said "the object was not there"); what the operator logged, its cleanup included, stays readable.

import { expect, test } from "bun:test";
import { Registry } from "kobun";
import { startOperator } from "kobun/testing";

function configMaps(): Registry {
  const registry = new Registry();
  registry.on.create("v1/configmaps", ({ patch }) => { patch.metadata.labels = { seen: "yes" }; }, { id: "seen" });
  registry.on.cleanup(({ logger }) => logger.info("cleaned up"), { id: "bye" });
  return registry;
}

const STOPPED = "the kit was stopped (stop(), or the end of `await using`): start another with startOperator()";

test("every call on a stopped kit is refused at once, saying so; its log lines stay readable", async () => {
  const kit = await startOperator({ registry: configMaps(), logLevel: "silent", timeout: 20_000 });
  await kit.apply("v1/configmaps", { metadata: { name: "c" } });
  await kit.until("v1/configmaps", "c", (o) => o.metadata.labels?.seen === "yes");
  await kit.stop();
  const started = performance.now();
  const refusal = (call: Promise<unknown>) => call.then(() => "done", (error: Error) => error.message);
  expect(await refusal(kit.apply("v1/configmaps", { metadata: { name: "d" } }))).toBe(`apply: ${STOPPED}`);
  expect(await refusal(kit.get("v1/configmaps", "c"))).toBe(`get: ${STOPPED}`);
  expect(await refusal(kit.list("v1/configmaps"))).toBe(`list: ${STOPPED}`);
  expect(await refusal(kit.delete("v1/configmaps", "c"))).toBe(`delete: ${STOPPED}`);
  expect(await refusal(kit.until("v1/configmaps", "c", () => true))).toBe(`until: ${STOPPED}`);
  expect(await refusal(kit.gone("v1/configmaps", "c"))).toBe(`gone: ${STOPPED}`);
  expect(await refusal(kit.consistently("v1/configmaps", "c", () => true, { for: 100 })))
    .toBe(`consistently: ${STOPPED}`);
  expect(await refusal(kit.events({ kind: "ConfigMap", metadata: { name: "c" } }))).toBe(`events: ${STOPPED}`);
  expect(await refusal(kit.logs.until(/never written/))).toBe(`logs.until(/never written/): ${STOPPED}`);
  expect(performance.now() - started).toBeLessThan(5_000); // at once, not after the kit's 20 s timeout
  expect(await kit.logs.until("cleaned up")).toContain("cleaned up"); // written at the stop: still found
}, 30_000);

test("a wait in flight when the kit stops ends at once, naming what it awaited, not at its timeout", async () => {
  const kit = await startOperator({ registry: configMaps(), logLevel: "silent", timeout: 20_000 });
  await kit.apply("v1/configmaps", { metadata: { name: "c" } });
  const started = performance.now();
  const waiting = kit.until("v1/configmaps", "c", (o) => o.data?.never === "1").then(() => "done", (e: Error) => e.message);
  const events = kit.events({ kind: "ConfigMap", metadata: { name: "c" } }, { until: () => false })
    .then(() => "done", (e: Error) => e.message);
  const line = kit.logs.until(/never written/).then(() => "done", (e: Error) => e.message);
  await kit.sandbox.waitFor((r) => r.verb === "watch" && r.query.includes("metadata.name%3Dc"), 5_000);
  await kit.stop();
  expect(await waiting).toBe(`until configmaps default/c (o) => o.data?.never === "1": ${STOPPED}`);
  expect(await events).toStartWith(`events(ConfigMap c): ${STOPPED}`);
  expect(await line).toBe(`logs.until(/never written/): ${STOPPED}`);
  expect(performance.now() - started).toBeLessThan(10_000);
}, 30_000);
