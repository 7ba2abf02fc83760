import { expect, test } from "bun:test";
import { Registry } from "kobun";
import { KopfExamples, sampleObject } from "../../kopf.ts";
import { loggedTimes, logLine, logTime, startExample } from "../../testing.ts";
import { timers } from "../handlers/example.ts";

const SCALE = 0.1; // idle 0.5 s and 1 s, intervals 0.2 s and 0.4 s

test("15-timers: each timer waits until the object was idle long enough, then runs at its interval", async () => {
  await using kit = await startExample(timers(new Registry(), SCALE));
  const changed = performance.now();
  await kit.apply(KopfExamples, sampleObject());
  const sync = logLine(`Ping from a sync timer: field="value"`);
  const first = await kit.logs.until(sync);
  expect(performance.now() - changed).toBeGreaterThanOrEqual(5 * SCALE * 1000);
  const second = await loggedTimes(kit.logs, sync, 2);
  // By the lines' own times (a loaded machine may hear of the first one late); timers may run a little early.
  expect(logTime(second) - logTime(first)).toBeGreaterThanOrEqual(2 * SCALE * 1000 * 0.9);
  await kit.logs.until(logLine(`Ping from an async timer: field="value"`));
  expect(performance.now() - changed).toBeGreaterThanOrEqual(10 * SCALE * 1000);

  // A change makes the object busy again: the next ping comes only after a new idle period.
  const again = performance.now();
  await kit.apply(KopfExamples, { ...sampleObject(), spec: { ...sampleObject().spec, field: "changed" } });
  await kit.logs.until(logLine(`Ping from a sync timer: field="changed"`));
  expect(performance.now() - again).toBeGreaterThanOrEqual(5 * SCALE * 1000);
});
