// runtime/lean-startup.ts: the first sync runs with the JIT reluctant and its code pages handed back while it
// is busy; it ends at the first quiet after every watch listed (a quiet before is a LIST's wait), after
// AT_MOST_MS, or when the operator stops, and then the JIT's policy is the normal one.
// test/e2e/code-pages.e2e.ts holds a compiled operator to it.

import { expect, test } from "bun:test";
import { AT_MOST_MS, LEAN_JIT_POLICY, LeanStartup, nextPhase, TRIM_EVERY_MS } from "../../src/runtime/lean-startup.ts";
import { Logger, memorySink } from "../../src/util/index.ts";

function leanAt() {
  const state = { quiet: false, wakes: 0, trims: 0, policies: [] as number[], clock: 1_000 };
  type Timer = { run: () => void; ms: number; cancelled: boolean };
  const timers = { every: [] as Timer[], later: [] as Timer[] };
  const sink = memorySink("debug", "json");
  const lean = new LeanStartup(new Logger(sink), { quiet: () => state.quiet, wakes: () => state.wakes }, () => state.trims++, {
    setJitPolicy: (scale) => state.policies.push(scale),
    every: (run, ms) => {
      const entry = { run, ms, cancelled: false };
      timers.every.push(entry);
      return () => void (entry.cancelled = true);
    },
    later: (run, ms) => {
      const entry = { run, ms, cancelled: false };
      timers.later.push(entry);
      return () => void (entry.cancelled = true);
    },
    now: () => state.clock,
  });
  const tick = () => timers.every.filter((t) => !t.cancelled).forEach((t) => t.run());
  return { lean, state, timers, tick, lines: () => sink.lines.map((line) => JSON.parse(line)) };
}

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

test("it begins reluctant, trims each TRIM_EVERY_MS that saw activity, and is over at the first quiet after listing", () => {
  const { lean, state, timers, tick, lines } = leanAt();
  expect(state.policies).toEqual([LEAN_JIT_POLICY]);
  expect(LEAN_JIT_POLICY).toBeGreaterThan(1);
  expect(timers.every.map((t) => t.ms)).toEqual([TRIM_EVERY_MS]);
  expect(timers.later.map((t) => t.ms)).toEqual([AT_MOST_MS]);

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
  lean.listed();
  expect(lean.current).toBe("listed");
  state.quiet = false;
  tick();
  expect(state.trims).toBe(3);

  state.clock += 12_345;
  lean.quiet();
  expect(lean.current).toBe("over");
  expect(state.policies).toEqual([LEAN_JIT_POLICY, 1]);
  expect(timers.every.every((t) => t.cancelled) && timers.later.every((t) => t.cancelled)).toBe(true);
  expect(lines().filter((l) => l.msg.startsWith("start-up over"))).toMatchObject([{ why: "synced", afterMs: 12_345, trims: 3 }]);

  lean.quiet();
  lean.stop();
  expect(state.policies).toEqual([LEAN_JIT_POLICY, 1]); // once
});

test("a start-up that never goes quiet is over after AT_MOST_MS; a stop ends it silently", () => {
  const busy = leanAt();
  busy.lean.listed();
  busy.timers.later[0]!.run();
  expect(busy.lean.current).toBe("over");
  expect(busy.state.policies).toEqual([LEAN_JIT_POLICY, 1]);
  expect(busy.lines().filter((l) => l.msg.startsWith("start-up over"))).toMatchObject([{ why: "took too long" }]);

  const stopped = leanAt();
  stopped.lean.stop();
  expect(stopped.lean.current).toBe("over");
  expect(stopped.state.policies).toEqual([LEAN_JIT_POLICY, 1]);
  expect(stopped.timers.every[0]!.cancelled).toBe(true);
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
