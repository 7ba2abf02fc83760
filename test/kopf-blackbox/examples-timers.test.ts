// Kopf's 15-timers and its timers docs, on the kit's virtual clock. Kopf documents a timer with
// `idle` and no `interval` (`@kopf.timer('kopfexamples', idle=10)`): called once the object has
// been unchanged that long, then not again until the next change has been left alone as long.
// And a timer's retry waits its error's delay, not the interval (Kopf's timer sleeps the retry
// delay while the call is not done), the next call an interval after the success.

import { expect, test } from "bun:test";
import { Registry, TemporaryError } from "kobun";
import { startOperator, type TestOperator } from "kobun/testing";
import { KopfExamples, sampleObject } from "../../examples/kopf/kopf.ts";
import { CRD } from "../../examples/kopf/testing.ts";

/** Seconds of virtual time since `kit.now()` when called. */
function stopwatch(kit: TestOperator): () => number {
  const t0 = kit.now().getTime();
  return () => Math.floor((kit.now().getTime() - t0) / 1000);
}

async function advanceBy(kit: TestOperator, seconds: number, step: number): Promise<void> {
  for (let done = 0; done < seconds; done += step) await kit.advance(step);
}

test("idle only: called once the object is unchanged for idle seconds, then only after the next change", async () => {
  const registry = new Registry();
  const at: number[] = [];
  let clock = () => 0;
  registry.on.timer(KopfExamples, ({ spec, logger }) => {
    at.push(clock());
    logger.info(`FIELD=${spec.field}`);
  }, { id: "ping_kex", idle: 10 });
  // The test's writes reach the operator over its watch: time moves only once it has heard of each
  // (an event handler runs after the timers saw the event), else a loaded machine starts the idle late.
  const heard = new Map<string, PromiseWithResolvers<void>>();
  const hearing = (field: string) => heard.get(field) ?? heard.set(field, Promise.withResolvers()).get(field)!;
  registry.on.event(KopfExamples, ({ spec }) => hearing(String(spec.field)).resolve(), { id: "heard" });
  await using kit = await startOperator({ registry, crds: [CRD], logLevel: "silent", timeout: 10_000, clock: "virtual" });
  clock = stopwatch(kit);
  await kit.apply(KopfExamples, sampleObject());                  // the creation counts as a change
  await hearing(String(sampleObject().spec.field)).promise;
  await advanceBy(kit, 30, 5);
  expect(at).toEqual([10]);
  await kit.apply(KopfExamples, { ...sampleObject(), spec: { field: "changed" } });
  await hearing("changed").promise;
  await advanceBy(kit, 40, 5);
  expect(at.length, JSON.stringify(at)).toBe(2);
  expect(at[1]! - 30).toBeGreaterThanOrEqual(10);                 // idle after the change ...
  expect(at[1]! - 30).toBeLessThanOrEqual(11);                    // ... and not a poll later
  await kit.logs.until("FIELD=changed");
}, 30_000);

test("a timer's retry waits its error's delay, not the interval; the next call an interval after the success", async () => {
  const registry = new Registry();
  const calls: [number, number][] = [];
  let clock = () => 0;
  registry.on.timer(KopfExamples, ({ retry }) => {
    calls.push([clock(), retry]);
    if (retry === 0 && calls.length === 1) throw new TemporaryError("later", { delay: 30 });
  }, { id: "t", interval: 10 });
  await using kit = await startOperator({ registry, crds: [CRD], logLevel: "silent", timeout: 10_000, clock: "virtual" });
  await kit.apply(KopfExamples, sampleObject());
  await kit.until(KopfExamples, "kopf-example-1", (o) => o.metadata.finalizers?.length);
  clock = stopwatch(kit);
  await advanceBy(kit, 60, 5);
  const first = calls[0]![0];
  expect(calls.slice(0, 3).map(([t, retry]) => [t - first, retry])).toEqual([[0, 0], [30, 1], [40, 0]]);
}, 30_000);

test("a timer needs an interval or an idle: neither is refused, naming both", () => {
  const registry = new Registry();
  expect(() => registry.on.timer(KopfExamples, () => {}, { id: "none" } as never))
    .toThrow("timer none: needs { interval } or { idle } in seconds > 0");
  expect(() => registry.on.timer(KopfExamples, () => {}, { id: "sharp", idle: 5, sharp: true }))
    .toThrow("timer sharp: sharp needs { interval }");
});
