// runtime/lean-startup.ts: the first sync runs with the JIT reluctant and its code pages handed back while it
// is busy (500 ms after start-up, each trim doubling the wait up to 4 s); it ends at the first quiet after
// every watch's first LIST was processed (a quiet before is a LIST's wait, or a pause of the sync),
// LISTED_AT_MOST_MS after that, AT_MOST_MS after start-up, or when the operator stops; then the JIT's
// policy is the normal one.
// test/e2e/code-pages.e2e.ts holds a compiled operator to it.

import { expect, test } from "bun:test";
import {
  AT_MOST_MS, LEAN_JIT_POLICY, LeanStartup, LISTED_AT_MOST_MS, nextPhase, nextTrimWait, TRIM_AT_MOST_EVERY_MS, TRIM_FIRST_EVERY_MS,
} from "../../src/runtime/lean-startup.ts";
import { Logger, memorySink } from "../../src/util/index.ts";

function leanAt() {
  const state = { quiet: false, wakes: 0, trims: 0, trimmable: true, policies: [] as number[], clock: 1_000 };
  type Timer = { run: () => void; ms: number; cancelled: boolean; ran: boolean };
  // The looks that may trim (waits up to TRIM_AT_MOST_EVERY_MS), and the bounds (AT_MOST_MS, LISTED_AT_MOST_MS).
  const timers = { looks: [] as Timer[], bounds: [] as Timer[] };
  const sink = memorySink("debug", "json");
  const lean = new LeanStartup(new Logger(sink), { quiet: () => state.quiet, wakes: () => state.wakes }, () => {
    if (state.trimmable) state.trims++;
    return state.trimmable;
  }, {
    setJitPolicy: (scale) => state.policies.push(scale),
    later: (run, ms) => {
      const entry = { run, ms, cancelled: false, ran: false };
      (ms <= TRIM_AT_MOST_EVERY_MS ? timers.looks : timers.bounds).push(entry);
      return () => void (entry.cancelled = true);
    },
    now: () => state.clock,
  });
  const pending = (list: Timer[]) => list.filter((t) => !t.cancelled && !t.ran);
  /** The pending look runs (there is one at most). */
  const tick = () => {
    const next = pending(timers.looks);
    expect(next.length).toBeLessThanOrEqual(1);
    for (const t of next) (t.ran = true), t.run();
  };
  return { lean, state, timers, tick, pending, lines: () => sink.lines.map((line) => JSON.parse(line)) };
}

test("the trims' wait: doubled by each trim up to TRIM_AT_MOST_EVERY_MS, kept by a look that found nothing ran", () => {
  let wait = TRIM_FIRST_EVERY_MS;
  const waits = [wait];
  for (let i = 0; i < 6; i++) waits.push((wait = nextTrimWait(wait, true)));
  expect(waits).toEqual([500, 1_000, 2_000, 4_000, 4_000, 4_000, 4_000]);
  expect(nextTrimWait(1_000, false)).toBe(1_000);
  expect(TRIM_AT_MOST_EVERY_MS).toBeLessThan(LISTED_AT_MOST_MS); // the harness tells looks from bounds by it
});

test("the phases: a quiet ends the start-up only once every watch listed; expiry and stop end it from anywhere", () => {
  expect(nextPhase("lean", "quiet")).toBe("lean");
  expect(nextPhase("lean", "listed")).toBe("listed");
  expect(nextPhase("listed", "quiet")).toBe("over");
  expect(nextPhase("listed", "listed")).toBe("listed");
  for (const signal of ["expired", "stopped"] as const) {
    expect(nextPhase("lean", signal)).toBe("over");
    expect(nextPhase("listed", signal)).toBe("over");
  }
  for (const signal of ["listed", "quiet", "expired", "stopped"] as const) expect(nextPhase("over", signal)).toBe("over");
});

test("it begins reluctant, trims at each look that saw activity, and is over at the first quiet after listing", () => {
  const { lean, state, timers, tick, pending, lines } = leanAt();
  expect(state.policies).toEqual([LEAN_JIT_POLICY]);
  expect(LEAN_JIT_POLICY).toBeGreaterThan(1);
  expect(timers.looks.map((t) => t.ms)).toEqual([TRIM_FIRST_EVERY_MS]);
  expect(timers.bounds.map((t) => t.ms)).toEqual([AT_MOST_MS]);

  tick(); // busy (the pacer awake): a trim
  expect(state.trims).toBe(1);
  state.quiet = true;
  tick(); // the pacer asleep, no wake since the last look: nothing ran, nothing to hand back
  expect(state.trims).toBe(1);
  state.wakes++; // it woke and fell asleep again between two looks: it ran
  tick();
  expect(state.trims).toBe(2);

  lean.quiet(); // a LIST's wait: not over
  expect(lean.current).toBe("lean");
  expect(state.policies).toEqual([LEAN_JIT_POLICY]);
  state.quiet = false; // the sync under way
  lean.listed();
  expect(lean.current).toBe("listed");
  tick();
  expect(state.trims).toBe(3);

  state.clock += 12_345;
  lean.quiet();
  expect(lean.current).toBe("over");
  expect(state.policies).toEqual([LEAN_JIT_POLICY, 1]);
  expect(pending(timers.looks)).toEqual([]);
  expect(pending(timers.bounds)).toEqual([]);
  // Each trim doubled the wait; the quiet look between kept it.
  expect(timers.looks.map((t) => t.ms)).toEqual([500, 1_000, 1_000, 2_000, 4_000]);
  expect(lines().filter((l) => l.msg.startsWith("start-up over"))).toMatchObject([{ why: "synced", afterMs: 12_345, trims: 3 }]);

  lean.quiet();
  lean.stop();
  expect(state.policies).toEqual([LEAN_JIT_POLICY, 1]); // once
});

test("a sync is never cut short by a clock: only a watch that never lists (AT_MOST_MS) or no quiet after it (LISTED_AT_MOST_MS)", () => {
  expect(AT_MOST_MS).toBeGreaterThanOrEqual(30 * 60_000); // 20,000 parents took 239 s, and a start-up may be slower
  const unlisted = leanAt();
  unlisted.state.clock += AT_MOST_MS;
  unlisted.timers.bounds[0]!.run();
  expect(unlisted.lean.current).toBe("over");
  expect(unlisted.state.policies).toEqual([LEAN_JIT_POLICY, 1]);
  expect(unlisted.lines().filter((l) => l.msg.startsWith("start-up over"))).toMatchObject([{ why: "not ready in time", afterMs: AT_MOST_MS }]);

  const busy = leanAt();
  busy.lean.listed();
  expect(busy.timers.bounds.map((t) => t.ms)).toEqual([AT_MOST_MS, LISTED_AT_MOST_MS]);
  busy.lean.listed(); // said once: the bound is not pushed back
  expect(busy.timers.bounds).toHaveLength(2);
  busy.timers.bounds[1]!.run();
  expect(busy.lean.current).toBe("over");
  expect(busy.pending(busy.timers.looks)).toEqual([]);
  expect(busy.timers.bounds[0]!.cancelled).toBe(true);
  expect(busy.lines().filter((l) => l.msg.startsWith("start-up over"))).toMatchObject([{ why: "never quiet after the sync" }]);
});

test("ready while already quiet is over at once; a trim that could not begin is not counted", () => {
  const { lean, state, timers, tick, pending, lines } = leanAt();
  tick(); // busy: a trim
  state.trimmable = false; // trims off, or one still under way
  tick();
  expect(state.trims).toBe(1);
  state.quiet = true; // the sync's last quiet came before ready: no other may follow for a while
  lean.listed();
  expect(lean.current).toBe("over");
  expect(pending(timers.bounds)).toEqual([]);
  expect(lines().filter((l) => l.msg.startsWith("start-up over"))).toMatchObject([{ why: "synced", trims: 1 }]);
});

test("a stop ends it silently, and a listed after it starts no bound", () => {
  const stopped = leanAt();
  stopped.lean.stop();
  expect(stopped.lean.current).toBe("over");
  expect(stopped.state.policies).toEqual([LEAN_JIT_POLICY, 1]);
  expect(stopped.timers.looks[0]!.cancelled).toBe(true);
  stopped.lean.listed();
  expect(stopped.pending(stopped.timers.bounds)).toEqual([]);
  expect(stopped.state.policies).toEqual([LEAN_JIT_POLICY, 1]);
  expect(stopped.lines().filter((l) => l.msg.startsWith("start-up over"))).toEqual([]);
});

// The policy is Bun's (1.4.5 on): a Bun without it would make the lean start-up a silent no-op. Each in a
// process of its own, as the policy is the VM's (the test runner's here).
const HOT = `
import { numberOfDFGCompiles } from "bun:jsc";
Bun.unsafe.setJITPolicy(Number(process.argv.at(-1)));
function hot(x) { let s = 0; for (let i = 0; i < 10; i++) s += x * i; return s; }
let total = 0;
for (let i = 0; i < 200000; i++) total += hot(i);
console.log(JSON.stringify({ compiles: numberOfDFGCompiles(hot), total }));
`;

test("Bun's JIT policy holds a hot function back from the optimising JIT at LEAN_JIT_POLICY, not at 1", () => {
  const compiles = (scale: number) => {
    const run = Bun.spawnSync([process.execPath, "-e", HOT, "--", String(scale)], { stderr: "pipe", env: { PATH: process.env.PATH ?? "" } });
    expect(run.exitCode, run.stderr.toString()).toBe(0);
    return JSON.parse(run.stdout.toString()).compiles as number;
  };
  expect(compiles(1)).toBeGreaterThan(0);
  expect(compiles(LEAN_JIT_POLICY)).toBe(0);
}, 30_000);
