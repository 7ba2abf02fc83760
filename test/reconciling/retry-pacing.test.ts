// Issue 30 #10: a timer or daemon retrying with TemporaryError(0) retries at a handler's pace
// (at most once per workers.batchWindow), not as fast as the event loop turns (~890 calls a
// second before), and its identical ERROR lines are summarised by the operator's log sink
// (util/log-repeats.ts) rather than written thousands of times.

import { afterEach, expect, test } from "bun:test";
import { Registry, TemporaryError } from "../../src/declaring/index.ts";
import { Logger, memorySink } from "../../src/util/log.ts";
import { withoutRepeats } from "../../src/util/log-repeats.ts";
import { startHarness, type Harness } from "../handling/harness.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const WINDOW_MS = 100; // workers.batchWindow's default
const MEASURED_MS = 1000;

/** Calls of `kind` "busy" (always TemporaryError(0)) during MEASURED_MS after its first, and the log lines meanwhile. */
async function measured(kind: "timer" | "daemon"): Promise<{ calls: number; lines: string[] }> {
  const registry = new Registry();
  let calls = 0;
  const busy = () => {
    calls++;
    h?.poke();
    throw new TemporaryError("busy", { delay: 0 });
  };
  if (kind === "timer") registry.on.timer("kobunexamples.kobun.dev/v1", busy, { id: "busy", interval: 60 });
  else registry.on.daemon("kobunexamples.kobun.dev/v1", busy, { id: "busy", finalizer: false });
  const sink = memorySink("info");
  h = await startHarness({ registry, settings: { workers: { batchWindow: WINDOW_MS / 1000, idleTimeout: 1 } }, processor: { logger: new Logger(withoutRepeats(sink)) } });
  await h.create("busy", {});
  await h.until(() => calls > 0, 10_000);
  const [before, linesBefore] = [calls, sink.lines.length];
  await Bun.sleep(MEASURED_MS); // a window to count in, not a synchronisation
  return { calls: calls - before, lines: sink.lines.slice(linesBefore) };
}

for (const kind of ["timer", "daemon"] as const) {
  test(`a ${kind} retrying with TemporaryError(0) is called at most once per batch window, as a handler is, and its identical ERROR lines are summarised`, async () => {
    const { calls, lines } = await measured(kind);
    // 1 s / 100 ms = 10 (+1 for the edge); a loaded machine only makes it fewer.
    expect(calls).toBeGreaterThanOrEqual(1);
    expect(calls).toBeLessThanOrEqual(MEASURED_MS / WINDOW_MS + 1);
    const errors = lines.filter((line) => line.includes(" ERROR "));
    expect(errors.length).toBeLessThanOrEqual(5); // the first five of the window; the rest counted
    expect(errors.every((line) => line.includes("retryInMs=100"))).toBe(true);
  }, 20_000);
}
