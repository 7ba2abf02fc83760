import { expect, test } from "bun:test";
import { Registry } from "kobun";
import { KopfExamples, sampleObject } from "../../kopf.ts";
import { startExample } from "../../testing.ts";
import { journal, timers } from "../handlers/example.ts";

const SCALE = 0.1; // idle 0.5 s and 1 s, intervals 0.2 s and 0.4 s

test("15-timers: each timer waits until the object was idle long enough, then runs at its interval", async () => {
  journal.clear();
  await using kit = await startExample(timers(new Registry(), SCALE));
  const changed = performance.now();
  await kit.apply(KopfExamples, sampleObject());
  const sync = `Ping from a sync timer: field="value"`;
  await journal.has(sync);
  expect(performance.now() - changed).toBeGreaterThanOrEqual(5 * SCALE * 1000);
  const first = performance.now();
  await journal.has(sync, 2);
  expect(performance.now() - first).toBeGreaterThanOrEqual(2 * SCALE * 1000 * 0.9); // timers may run a little early
  await journal.has(`Ping from an async timer: field="value"`);
  expect(performance.now() - changed).toBeGreaterThanOrEqual(10 * SCALE * 1000);

  // A change makes the object busy again: the next ping comes only after a new idle period.
  const again = performance.now();
  await kit.apply(KopfExamples, { ...sampleObject(), spec: { ...sampleObject().spec, field: "changed" } });
  await journal.has(`Ping from a sync timer: field="changed"`);
  expect(performance.now() - again).toBeGreaterThanOrEqual(5 * SCALE * 1000);
});
