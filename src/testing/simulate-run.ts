// One simulated run: a fresh sandbox with the operator's CRDs, the operator in this process on a
// virtual clock of its own (installed for the run: runs go one at a time), the scenario played
// step by step under one schedule of faults, settled after each (simulate-settle.ts), and the
// checks: invariants after every step and at the end, no deletion left hanging, and (given the
// reference run's) the same final state. It tells what happened as a story, and the operator's
// writes, as the reference run's crash points.

import { startSandbox, type Sandbox } from "@kobun/sandbox";
import type { Registry } from "../declaring/index.ts";
import { ApiError, KubeClient } from "../kube/index.ts";
import { applyManifests } from "../runtime/dev.ts";
import { withDefinitions, type Manifest } from "../runtime/index.ts";
import { memorySink, silentLogger, useClock, VirtualClock, type MemorySink } from "../util/index.ts";
import { TestOperator } from "./operator.ts";
import { differences, snapshot, stuckDeletions, type Resources, type Snapshot } from "./simulate-checks.ts";
import { RunUids } from "./simulate-identities.ts";
import { INSTANCE_PREFIX, leaseName, Operators, QuietWatch } from "./simulate-operators.ts";
import {
  armFaults, expireHeld, heldAcross, holdEndsAt, holdWatches, listenToWrites, type FaultPoints,
} from "./simulate-faults.ts";
import { Settler, Unsettled, type SettleLimits } from "./simulate-settle.ts";
import { describeFault, type Schedule, type WriteSite } from "./simulate-schedule.ts";
import { makeWorld, type World } from "./simulate-world.ts";

/** holds when it returns true or nothing; false, a string (what is wrong) or a throw is a violation */
export type Invariant = (world: World) => unknown;

export interface RunSetup {
  registry: Registry;
  namespace: string;
  manifests: Manifest[];
  scenario: (world: World) => Promise<void>;
  invariants: Record<string, Invariant>;
  volatile: (string | readonly string[])[];
  settle: SettleLimits;
  /** the virtual time every run starts at (ms since the epoch): the same for each, so a replay is exact */
  startsAt: number;
  /** handler ids that must not run to completion twice for one object */
  once: string[];
  config?: Record<string, unknown>;
  memo?: Record<string, unknown> | (() => Record<string, unknown>);
  /** the instances' request deadline (real ms), when timeouts may strike */
  requestTimeoutMs?: number;
}

export interface RunFailure {
  check: "convergence" | "invariant" | "deletion" | "settle" | "scenario" | "operator" | "once";
  /** the step after which it was found (undefined: at the end) */
  step?: number;
  message: string;
  details: string[];
  /** objects whose last handler or reconcile call had failed when the check failed: one line each, a few at most */
  failing?: string[];
}

export interface RunOutcome {
  /** the operator's writes (Events aside), in order */
  sites: WriteSite[];
  /** its requests, and its writes on the scenario's objects (what other faults strike at) */
  points: FaultPoints;
  /** every resource written in the run */
  resources: Resources[];
  steps: number;
  snapshot: Snapshot;
  failure?: RunFailure;
  story: string[];
  /** the operator's log lines (info and up, each with its instance) */
  logs: string[];
  ms: number;
}

/** the checks of the cluster's state, whose report says which objects the operator was failing on (a settle's
 * report has its last log lines, a scenario's or an operator's failure is its own story) */
const FAILING_TOLD = new Set<RunFailure["check"]>(["convergence", "invariant", "deletion"]);

class Found extends Error {
  constructor(readonly failure: RunFailure) {
    super(failure.message);
  }
}

// long: one run's whole life in order (start, faults armed, steps, end checks, teardown) reads best in one place
export async function runOnce(setup: RunSetup, schedule: Schedule, reference?: Snapshot): Promise<RunOutcome> {
  const started = performance.now();
  const time = new VirtualClock(setup.startsAt);
  const restoreClock = useClock(time);
  // bookmarks rarely: each is one more line a settle sees through to the operator
  const sandbox = await startSandbox({ bookmarkIntervalMs: 60_000 }).catch((error: unknown) => {
    restoreClock();
    throw error;
  });
  const logs = memorySink("info");
  const story: string[] = schedule.faults.map((fault) => `fault: ${describeFault(fault)}`);
  const quiet = new QuietWatch();
  const operators = new Operators({
    sandbox, registry: setup.registry, namespace: setup.namespace, logs, onActivity: () => quiet.activity(),
    ...(setup.config ? { config: setup.config } : {}),
    ...(setup.memo ? { memo: setup.memo } : {}),
    ...(setup.requestTimeoutMs ? { requestTimeoutMs: setup.requestTimeoutMs } : {}),
  });
  // the lines of its Lease's watch (lease mode) are no watch events it counts as read: left out
  const sent = (client: string) =>
    sandbox.faults.watchLinesSent(client) - sandbox.faults.watchLinesSent(client, { plural: "leases" });
  const lines = {
    sent: () => sent(operators.current), read: () => operators.received(),
    listing: () => operators.listing(),
  };
  const settler = new Settler(time, setup.settle, { failed: operators.failed.signal, activity: quiet, lines });
  const sites: WriteSite[] = [];
  const points: FaultPoints = { requests: [], recreatable: [] };
  const resources = new Map<string, Resources>();
  let steps = 0;
  let admin: KubeClient | undefined;
  try {
    admin = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
    await applyManifests(admin, withDefinitions(setup.manifests, setup.registry), silentLogger,
      AbortSignal.timeout(30_000));
    await makeNamespace(admin, setup.namespace);
    const lease = { namespace: setup.namespace, name: leaseName(setup.config) };
    const uids = new RunUids(sandbox);
    listenToWrites(sandbox, schedule.faults, { sites, points, resources, story, operators, quiet, admin, logs, lease });
    // the live instance's every request (a GET, a LIST, a watch) shows it at work, as its writes do
    sandbox.faults.clients.onRequest((client) => { if (client === operators.current) quiet.activity(); });
    // a delayed watch event is a timer on the run's clock: the settle fires it when due
    sandbox.faults.delayTime(settler.network);
    armFaults(sandbox, schedule.faults);
    await operators.start();
    const kit = kitOf(sandbox, admin, setup.namespace, logs);
    const release = () => {
      if (sandbox.faults.pendingMerged() > 0) story.push("  the merged events are delivered");
      sandbox.faults.releaseMerged();
      quiet.activity();
    };
    /** the steps whose holds (a merge's, an expiry's) have ended: at the step, or before it for an apply (untilGone) */
    const ended = new Set<number>();
    const endHold = (step: number) => {
      if (!holdEndsAt(schedule.faults, step) || ended.has(step)) return;
      ended.add(step);
      expireHeld(sandbox, schedule.faults, step, story);
      release();
    };
    const settle = async (step: number | undefined, how: () => Promise<void> = () => settler.settle()) => {
      await operators.ready;
      await how().catch((error: unknown) => {
        if (operators.failure) return; // told below
        if (!(error instanceof Unsettled)) throw error;
        const stuck = stuckDeletions(sandbox, resources.values());
        const last = logs.lines.slice(-6).map((line) => `log: ${line.slice(0, 300)}`);
        throw new Found({ check: "settle", step, message: error.message, details: [...stuck, ...last] });
      });
      if (operators.failure) {
        throw new Found({ check: "operator", step, message: operators.failure.message, details: [] });
      }
    };
    const world: World = makeWorld(kit, {
      before(step, what) {
        story.push(`step ${step}: ${what}`);
        holdWatches(sandbox, schedule.faults, step);
      },
      async after(step) {
        steps = step;
        if (holdEndsAt(schedule.faults, step) && !ended.has(step)) {
          // the operator first acts on this step with the held resource's view still stale, as a lagging cache would
          await settle(step);
          endHold(step);
        }
        await settle(step);
        await checkInvariants(setup.invariants, world, step, heldAcross(schedule.faults, step));
      },
      advance: (step, seconds) => settle(step, () => settler.advance(seconds)),
      async untilGone(next, what) {
        story.push(`  ${what} still being deleted: step ${next} waits for it to go first, as kubectl delete does`);
        endHold(next); // the operator's view catches up, as it would while a user waits
        await settle(next - 1);
      },
    });
    let failure: RunFailure | undefined;
    try {
      await settle(0); // the operator started and listed: its start-up timers fired
      await setup.scenario(world);
      release();
      await settle(undefined);
      await checkInvariants(setup.invariants, world, undefined);
    } catch (error) {
      if (!(error instanceof Found)) {
        const message = `the scenario failed at step ${world.step}: ${(error as Error)?.message ?? error}`;
        failure = { check: "scenario", step: world.step, message, details: [] };
      } else failure = error.failure;
    }
    const stuck = failure ? [] : stuckDeletions(sandbox, resources.values());
    if (stuck.length > 0) failure = { check: "deletion", message: "a deletion never completed", details: stuck };
    const twice = failure ? [] : ranTwice(logs.lines, setup.once);
    if (twice.length > 0) failure = { check: "once", message: "a once-only handler ran twice", details: twice };
    const state = snapshot(sandbox, resources.values(), setup.volatile, uids);
    const diff = reference && !failure ? differences(reference, state) : [];
    if (diff.length > 0) {
      failure = { check: "convergence", message: "the final state differs from the fault-free run's", details: diff };
    }
    if (failure && FAILING_TOLD.has(failure.check)) {
      const exists = (o: { group: string; plural: string; namespace?: string; name: string }) =>
        sandbox.store.get(o.group, o.plural, o.namespace, o.name) !== undefined;
      const failing = operators.calls.failing(exists);
      if (failing.length > 0) failure.failing = failing;
    }
    return {
      sites, points, resources: [...resources.values()], steps, snapshot: state, story, logs: logs.lines,
      ms: performance.now() - started, ...(failure ? { failure } : {}),
    };
  } finally {
    await operators.stopAll();
    admin?.close();
    await sandbox.stop();
    restoreClock();
  }
}

/** the once-only handlers that succeeded twice for one object, from the live instances' log lines */
function ranTwice(lines: readonly string[], once: readonly string[]): string[] {
  if (once.length === 0) return [];
  const counts = new Map<string, string[]>();
  for (const line of lines) {
    const match = /Handler '([^']+)' succeeded\..*?\bname=(\S+)/.exec(line);
    if (!match || !once.includes(match[1]!)) continue;
    const key = `handler '${match[1]}' of ${match[2]}`;
    counts.set(key, [...(counts.get(key) ?? []), line.slice(0, line.indexOf("]") + 1)]);
  }
  return [...counts].filter(([, by]) => by.length > 1)
    .map(([key, by]) => `${key} succeeded ${by.length} times (by instances ${by.join(" ")})`);
}

/** the run's namespace, unless the sandbox has it from the start (default, kube-system) */
async function makeNamespace(client: KubeClient, name: string): Promise<void> {
  const namespace = { apiVersion: "v1", kind: "Namespace", metadata: { name } };
  await client.create(await client.resolve("v1/namespaces"), null, namespace).catch((error: unknown) => {
    if (!(error instanceof ApiError && error.code === 409)) throw error;
  });
}

async function checkInvariants(
  invariants: Record<string, Invariant>, world: World, step: number | undefined, held: string[] = [],
) {
  for (const [name, invariant] of Object.entries(invariants)) {
    let verdict: unknown;
    try {
      verdict = await invariant(world);
    } catch (error) {
      verdict = `it threw: ${(error as Error)?.message ?? error}`;
    }
    if (verdict === true || verdict === undefined) continue;
    const why = typeof verdict === "string" ? verdict : `it returned ${JSON.stringify(verdict)}`;
    const when = step === undefined ? "at the end" : step === 0 ? "at the start" : `after step ${step}`;
    throw new Found({ check: "invariant", step, message: `invariant "${name}" broken ${when}: ${why}`, details: held });
  }
}

/** the kit's object methods over this run's sandbox (the operator is not the kit's: Operators runs it) */
function kitOf(sandbox: Sandbox, client: KubeClient, namespace: string, logs: MemorySink): TestOperator {
  const never = new AbortController();
  return new TestOperator({
    sandbox, client, namespace, operatorStop: never, failed: never.signal, running: Promise.resolve(),
    logger: silentLogger, logs, timeoutMs: 5000, restoreClock: () => {},
  });
}
