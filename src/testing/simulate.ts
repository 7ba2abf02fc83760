// simulate(): the operator's scenario run many times, each under a different seeded schedule of
// faults (a crash after each of its writes first, Sieve's way, then random mixes of crashes,
// stale watches, merged events and failed writes), each run judged against a fault-free
// reference run. Each run has a virtual clock of its own (timers, retries, requeueAfter and
// delayed watch events play out at once), installed for the run, so runs go one at a time. The
// first failing schedule is shrunk (its faults dropped one by one while it still fails) and
// reported as a story that `simulate({ seed })` replays.

import { readFileSync } from "node:fs";
import { basename } from "node:path";
import type { Registry } from "../declaring/index.ts";
import { registry as defaultRegistry } from "../declaring/index.ts";
import { VOLATILE_FIELDS } from "./simulate-checks.ts";
import {
  describeFault, explore, kindsOf, scheduleOf, type Fault, type FaultKinds, type Schedule,
} from "./simulate-schedule.ts";
import { leaseMode } from "./simulate-operators.ts";
import { checkOnce, checkOnceRan, checkOptions } from "./simulate-options.ts";
import { runOnce, type Invariant, type RunFailure, type RunOutcome, type RunSetup } from "./simulate-run.ts";
import type { World } from "./simulate-world.ts";
import { storyOf } from "./simulate-report.ts";

/** the seed a schedule given as `schedule` (not explored) runs under */
const GIVEN = "given";

/** the request deadline of a simulated instance's client when timeouts are on, in real ms */
const TIMEOUT_CLIENT_MS = 1000;

export interface SimulateOptions {
  /** what the test does to the cluster: each apply, patchStatus or delete is a step, the operator settled after it */
  scenario: (world: World) => Promise<void>;
  /** the handlers to run (default: the registry `on.*` fills) */
  registry?: Registry;
  /** CRD files (YAML) besides those of defineResource's resources */
  crds?: string[];
  /** where the operator watches and the scenario's objects go (default "default") */
  namespace?: string;
  /** checked after every step and at the end: true or nothing holds; false, a string or a throw is broken */
  invariants?: Record<string, Invariant>;
  /** more paths left out of the comparison with the reference run: dotted ("*" for any key or element), or a
   * list of keys for a key holding dots (`["metadata", "annotations", "example.com/stamp"]`) */
  volatile?: (string | readonly string[])[];
  /** the kinds of fault to inject (each default true): crash, delay, merge, errors, expire, recreate; and lease,
   * on by default (and allowed) only when `config` runs the operator in lease mode (`peering: { mode: "lease" }`) */
  faults?: Partial<FaultKinds>;
  /** how many schedules to run at most (default 16, or KOBUN_SIMULATE_SCHEDULES as `kobun test --simulate=N` sets
   * it): every crash point first, then random mixes */
  schedules?: number;
  /** a number: the master seed (default 1); "<master>/<index>", as a failure reports it: that schedule only */
  seed?: number | string;
  /** run exactly these faults (as a failure lists them), instead of exploring */
  schedule?: Fault[];
  /** virtual seconds after each step within which due timers fire as the operator settles (default 60) */
  horizon?: number;
  /** timers one settle may fire before the run fails as a storm (default 1000) */
  maxFirings?: number;
  /** real ms the operator may stay busy (no pause at all) before the run fails as never settling (default 5000) */
  settleTimeout?: number;
  /** shrink a failing schedule before reporting it (default true) */
  shrink?: boolean;
  /** handler ids that promise to run once: a run where one succeeds twice for an object fails */
  once?: string[];
  /** more operator settings, as a kobun.yaml's data */
  config?: Record<string, unknown>;
  /** what `run({ memo })` gives the operator (an embedding program's state): a function makes it afresh for each
   * instance, as a new process would; an object is copied (shallowly) for each */
  memo?: Record<string, unknown> | (() => Record<string, unknown>);
}

export interface SimulationResult {
  /** the schedules run, each with its seed, faults and time */
  runs: { seed: string; faults: Fault[]; ms: number; ok: boolean }[];
  /** the operator's writes in the reference run: the crash points */
  crashPoints: number;
  ms: number;
}

/** A schedule under which the operator failed a check; `report` tells the story. */
export class SimulationFailure extends Error {
  constructor(
    readonly report: string,
    /** the schedule as explored; `simulate({ seed })` replays it */
    readonly schedule: Schedule,
    /** the fewest faults that still fail (the schedule itself if nothing could be dropped) */
    readonly shrunk: Fault[],
    readonly failure: RunFailure,
    /** the runs before this one, which passed */
    readonly passed: number,
  ) {
    super(report);
    this.name = "SimulationFailure";
  }
}

/** Runs the scenario under fault schedules; resolves when every one passes, else rejects with a SimulationFailure. */
export async function simulate(options: SimulateOptions): Promise<SimulationResult> {
  const started = performance.now();
  const setup = setupOf(options);
  const reference = await runOnce(setup, { seed: "reference", faults: [] });
  if (reference.failure) {
    const report = `simulate: the fault-free reference run fails already\n${storyOf(reference, reference.failure)}`;
    throw new SimulationFailure(report, { seed: "reference", faults: [] }, [], reference.failure, 0);
  }
  checkOnceRan(setup.once, reference.logs, options.registry ?? defaultRegistry);
  const schedules = schedulesOf(options, reference);
  const runs: SimulationResult["runs"] = [];
  const found = await runAll(setup, schedules, reference, runs);
  if (found) throw await failureOf(setup, options, reference, found, runs.filter((r) => r.ok).length);
  return { runs, crashPoints: reference.sites.length, ms: performance.now() - started };
}

function setupOf(options: SimulateOptions): RunSetup {
  checkOptions(options as unknown as Record<string, unknown>);
  checkOnce(options.once ?? [], options.registry ?? defaultRegistry);
  checkAsked(options);
  const manifests = (options.crds ?? []).map((path) => ({ name: basename(path), text: readFileSync(path, "utf8") }));
  return {
    registry: options.registry ?? defaultRegistry, namespace: options.namespace ?? "default", manifests,
    scenario: options.scenario, invariants: options.invariants ?? {},
    volatile: [...VOLATILE_FIELDS, ...(options.volatile ?? [])], once: options.once ?? [], startsAt: Date.now(),
    settle: {
      horizonMs: (options.horizon ?? 60) * 1000,
      maxFirings: options.maxFirings ?? 1000,
      timeoutMs: options.settleTimeout ?? 5000,
    },
    ...(options.config ? { config: options.config } : {}),
    ...(options.memo ? { memo: options.memo } : {}),
    // a timeout strikes when the instance's client gives up: its deadline is short (real time)
    ...(timeoutsMayStrike(options) ? { requestTimeoutMs: TIMEOUT_CLIENT_MS } : {}),
  };
}

/** what the options ask that no run could give, found before the reference run rather than after it */
function checkAsked(options: SimulateOptions): void {
  const leaseAsked = options.faults?.lease || options.schedule?.some((fault) => fault.kind === "lease");
  if (leaseAsked && !leaseMode(options.config)) {
    // outside lease mode no Lease exists to take: the fault would never strike, and the run pass
    const asked = options.faults?.lease ? "faults: { lease: true }" : 'schedule: [{ kind: "lease", ... }]';
    throw new Error(`simulate({ ${asked} }): the operator must run in lease mode: ` +
      'config: { peering: { mode: "lease" } }');
  }
  if (options.schedules === undefined) budgetFromEnv();
  const kinds = kindsOf(options.faults);
  if (!leaseMode(options.config)) kinds.lease = false;
  if (!options.schedule && !Object.values(kinds).some(Boolean)) {
    throw new Error("simulate: no schedule to run: every kind of fault is off (faults); a simulation with none " +
      "would pass having run nothing but the fault-free run");
  }
}

function schedulesOf(options: SimulateOptions, reference: RunOutcome): Schedule[] {
  if (options.schedule) return [{ seed: GIVEN, faults: options.schedule }];
  const kinds = kindsOf(options.faults);
  if (!leaseMode(options.config)) kinds.lease = false;
  const plurals = [...new Set(reference.resources.map((r) => r.plural))].filter((p) => p !== "events");
  const input = { kinds, sites: reference.sites, plurals, steps: reference.steps, ...reference.points };
  if (typeof options.seed === "string") return [scheduleOf(options.seed, input)];
  const budget = options.schedules ?? budgetFromEnv() ?? 16;
  if (!(budget >= 1)) throw new Error(`simulate({ schedules }): must be at least 1, not ${budget}`);
  const schedules = explore({ ...input, seed: options.seed ?? 1, budget });
  if (schedules.length === 0) {
    // nothing for a fault to strike at: a pass would say the operator survived faults it never met
    throw new Error(`simulate: no schedule to run: the fault-free run took ${reference.steps} steps and the ` +
      `operator made ${reference.sites.length} writes, which leaves the faults on no point to strike at ` +
      "(a scenario's steps are world.apply, applyAll, patchStatus, delete and advance)");
  }
  return schedules;
}

function timeoutsMayStrike(options: SimulateOptions): boolean {
  return kindsOf(options.faults).timeout || (options.schedule ?? []).some((fault) => fault.kind === "timeout");
}

/** the default budget `kobun test --simulate=N` sets for every simulate() that names none */
function budgetFromEnv(): number | undefined {
  const value = process.env.KOBUN_SIMULATE_SCHEDULES;
  if (value === undefined || value === "") return undefined;
  if (!/^[1-9][0-9]*$/.test(value)) {
    throw new Error(`simulate: KOBUN_SIMULATE_SCHEDULES must be a positive whole number, not ${JSON.stringify(value)}`);
  }
  return Number(value);
}

interface Found { schedule: Schedule; outcome: RunOutcome }

/**
 * runs the schedules one after another (each installs its own virtual clock, process-wide); the
 * first that fails, if any (the rest are not run). A run that throws ends the simulation with its error.
 */
async function runAll(
  setup: RunSetup, schedules: Schedule[], reference: RunOutcome, runs: SimulationResult["runs"],
): Promise<Found | undefined> {
  for (const schedule of schedules) {
    const outcome = await runOnce(setup, schedule, reference.snapshot);
    runs.push({ seed: schedule.seed, faults: schedule.faults, ms: Math.round(outcome.ms), ok: !outcome.failure });
    if (outcome.failure) return { schedule, outcome };
  }
  return undefined;
}

/** drops faults one by one while the run still fails the same check; then tells the story */
async function failureOf(
  setup: RunSetup, options: SimulateOptions, reference: RunOutcome, found: Found, passed: number,
): Promise<SimulationFailure> {
  let faults = found.schedule.faults;
  let outcome = found.outcome;
  const check = outcome.failure!.check;
  if (options.shrink !== false) {
    for (let i = faults.length - 1; i >= 0 && faults.length > 1; i--) {
      const fewer = faults.filter((_, j) => j !== i);
      const tried = await runOnce(setup, { seed: found.schedule.seed, faults: fewer }, reference.snapshot);
      if (tried.failure?.check === check) [faults, outcome] = [fewer, tried];
    }
  }
  const failure = outcome.failure!;
  const head = `simulate: schedule "${found.schedule.seed}" fails (${passed} other schedules passed)`;
  const faultLines = faults.map((fault) => `  - ${describeFault(fault)}`);
  const shrunk = faults.length < found.schedule.faults.length ? ` (shrunk from ${found.schedule.faults.length})` : "";
  const exactly = `simulate({ ...options, schedule: ${JSON.stringify(faults)} })`;
  // a schedule the test gave as faults has no seed that names it: only the faults replay it
  const replay = found.schedule.seed === GIVEN
    ? `replay: ${exactly}`
    : `replay: simulate({ ...options, seed: "${found.schedule.seed}" }), or exactly these faults: ${exactly}`;
  const report = [head, `faults${shrunk}:`, ...faultLines, storyOf(outcome, failure), replay].join("\n");
  return new SimulationFailure(report, found.schedule, faults, failure, passed);
}
