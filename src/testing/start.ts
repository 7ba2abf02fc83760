// startOperator(): a sandbox, the handlers' CRDs installed into it, and the operator running in
// this process, its log kept in memory (`kit.logs`) and, from `logLevel`, on stderr too.

import { resolveSettings, type FlagValues } from "../config/index.ts";
import type { Registry } from "../declaring/index.ts";
import { registry as defaultRegistry } from "../declaring/index.ts";
import { isNotFound } from "../kube/index.ts";
import { KubeClient } from "../kube/index.ts";
import { applyManifests, startSandbox } from "../runtime/dev.ts";
import { manifestCRDs, run, withDefinitions, type Manifest, type RunOptions } from "../runtime/index.ts";
import { Logger, memorySink, stderrSink, teeSink, useClock, VirtualClock } from "../util/index.ts";
import type { LogLevel, LogSink, MemorySink, Toggle } from "../util/index.ts";
import { quiet } from "./advance.ts";
import { TestOperator } from "./operator.ts";
import { checkOptions, readCrds } from "./options.ts";

export interface TestOperatorOptions {
  /** The namespace the operator watches and objects go to by default (default "default"; created if missing). */
  namespace?: string;
  /** CRD files (YAML), or directories of them, to install besides defineResource's, e.g. handlers/my.crd.yaml. */
  crds?: string[];
  /** More `kobun run` flags, as parsed (e.g. { config: "kobun.yaml" }); namespaces and standalone are the kit's. */
  flags?: Partial<FlagValues>;
  /** The handlers to run (default: the registry that `on.*` fills). */
  registry?: Registry;
  /** The bound of the start (until ready) and the default of `until`, `gone`, `events`, `logs.until`, in ms (5000). */
  timeout?: number;
  /** The operator's log on stderr from this level (default "warn"); "silent" for none. */
  logLevel?: LogLevel | "silent";
  /** The lines `kit.logs` keeps, from this level (default "info"). */
  logCapture?: LogLevel;
  /** Shared with every handler and activity as `ctx.memo` (`run({ memo })`); default a fresh object. */
  memo?: Record<string, any>;
  /**
   * "virtual": handler time (timers, daemons' sleeps, requeueAfter, backoff, retries, handler timeouts,
   * `now()`) stands still until `kit.advance(seconds)` moves it; one such operator at a time per process.
   * Default "real".
   */
  clock?: "real" | "virtual";
  /**
   * The operator's freeze toggle (`run({ toggle })`): `toggle.freeze(reason)` stops it as a peer of higher
   * priority would (handlers' signals abort, nothing new starts), `unfreeze` resumes it. Frozen before the
   * operator is ready, startOperator resolves only once it is unfrozen and ready (within `timeout`).
   */
  toggle?: Toggle;
}

/** The kit's log: every line from `logCapture` in memory (kit.logs), and from `logLevel` on stderr. */
function kitLogger(options: TestOperatorOptions): { logger: Logger; logs: MemorySink } {
  const logs = memorySink(options.logCapture ?? "info");
  const sinks: [LogSink, ...LogSink[]] = [logs];
  if (options.logLevel !== "silent") sinks.push(stderrSink(options.logLevel ?? "warn"));
  return { logger: new Logger(teeSink(...sinks)), logs };
}

/**
 * Starts a sandbox and the operator in this process, with the handlers the test file imported
 * and the CRDs of their defined resources (and of `crds`) installed. Resolves once the
 * operator is ready: every watch has listed and the listed objects were handled once, so an object
 * the test creates next arrives as created (not listed). Stop it with `stop()`, or `await using`.
 */
export async function startOperator(options: TestOperatorOptions = {}): Promise<TestOperator> {
  checkOptions(options as Record<string, unknown>);
  const namespace = options.namespace ?? "default";
  const clock = clockOf(options);
  const { logger, logs } = kitLogger(options);
  const manifests: Manifest[] = readCrds(options.crds ?? []);
  const sandbox = await startSandbox();
  const timeoutMs = options.timeout ?? 5000;
  let client: KubeClient | undefined;
  let launched: Launched | undefined;
  let restoreClock = noop;
  try {
    client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
    const registry = options.registry ?? defaultRegistry;
    await applyManifests(client, withDefinitions(manifests, registry), logger, AbortSignal.timeout(30_000));
    await ensureNamespace(client, namespace);
    const flags = { ...options.flags, kubeconfig: sandbox.kubeconfigPath, namespaces: [namespace], standalone: true };
    let settings = resolveSettings({ flags });
    // Registered webhooks are served, as `kobun dev` serves them: else a validator's test passes, unserved.
    const { url, listen } = settings.webhooks;
    if (url === null && listen === null && registry.webhooks.length + registry.conversions.length > 0) {
      settings = resolveSettings({ flags: { ...flags, webhooksUrl: "https://127.0.0.1:0" } });
    }
    restoreClock = clock ? useClock(clock) : noop;
    // The CRD files' names key kobun.yaml's resources (flags.config) as in `kobun run`.
    const crds = manifestCRDs(manifests);
    const toggle = options.toggle ? { toggle: options.toggle } : {};
    launched = launch({ settings, registry, logger, memo: options.memo ?? {}, crds, ...toggle });
    const { starting, failure } = launched;
    const frozen = () => {
      const holders = options.toggle?.frozen ? options.toggle.reasons() : undefined;
      return holders ? `; frozen by the toggle: ${JSON.stringify(holders)}` : "";
    };
    await readyWithin(clock ? fireWhileStarting(clock, starting, failure.signal) : starting, timeoutMs, logs, frozen);
    return new TestOperator({
      sandbox, client, namespace, operatorStop: launched.stop, failed: failure.signal, running: launched.running,
      logger, logs, timeoutMs, clock, restoreClock,
    });
  } catch (error) {
    // Not ready in time (or its start failed): the operator is stopped before the clock and the sandbox go.
    launched?.stop.abort(new DOMException("the test operator did not start", "AbortError"));
    await launched?.running;
    restoreClock();
    client?.close();
    await sandbox.stop();
    throw error;
  }
}

/** The operator, running: how to stop it, its failure, its end, and its start (ready, or failed first). */
interface Launched {
  stop: AbortController;
  /** Aborted when the operator ends by itself (its error is the reason). */
  failure: AbortController;
  /** Settles (never rejects) once run() has ended. */
  running: Promise<void>;
  /** Resolves once it is ready; rejects if it ended first. */
  starting: Promise<void>;
}

function launch(options: Omit<RunOptions, "signal" | "onReady">): Launched {
  const stop = new AbortController();
  const failure = new AbortController();
  const ready = Promise.withResolvers<void>();
  const running = run({ ...options, signal: stop.signal, onReady: () => ready.resolve() }).then(
    () => { if (!stop.signal.aborted) failure.abort(new Error("the test operator ended before stop()")); },
    (error) => {
      if (!(error instanceof Error)) return failure.abort(error);
      failure.abort(new Error(`the test operator failed: ${error.message}`, { cause: error }));
    },
  );
  const endedFirst = running.then(() => {
    throw failure.signal.reason ?? new Error("the test operator ended before it started");
  });
  endedFirst.catch(() => {}); // read by the race only: once started, the operator's end is stop()'s business
  return { stop, failure, running, starting: Promise.race([ready.promise, endedFirst]) };
}

/**
 * `starting`, or a failure after `ms` that says what ready means and what the operator last logged (a
 * startup handler waiting for ever, a toggle never unfrozen: before this bound, startOperator never settled).
 */
async function readyWithin(
  starting: Promise<void>, ms: number, logs: MemorySink, more: () => string,
): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const recent = logs.lines.slice(-5).map((line) => `\n  ${line}`).join("") || " (none)";
      reject(new Error(
        `startOperator: the operator was not ready after ${ms} ms (the kit's \`timeout\`): ready is every ` +
          `watch listed and what it listed handled once, after the on.startup handlers${more()}; ` +
          `its last log lines:${recent}`,
      ));
    }, ms);
  });
  try {
    await Promise.race([starting, late]);
  } finally {
    clearTimeout(timer);
  }
}

const noop = () => {};

/** The bound of each wait for the starting operator to go quiet, in real ms (start-up lists, may apply CRDs). */
const START_QUIET_BOUND_MS = 30_000;

/**
 * On a virtual clock, what start-up itself waits for (a startup handler's sleep(), its retry after a
 * TemporaryError) falls due as the operator goes quiet (advance.ts's quiet): each such timer is fired in
 * turn, so the kit starts, with its time moved on by those waits (before it, such a start waited for ever).
 */
async function fireWhileStarting(time: VirtualClock, starting: Promise<void>, failed: AbortSignal): Promise<void> {
  let started = false;
  const done = starting.finally(() => void (started = true));
  done.catch(() => {}); // awaited below
  while (!started) {
    const settled = quiet(time, { timeoutMs: START_QUIET_BOUND_MS, failed }, "while it started");
    settled.catch(() => {}); // outlived by `done` once started: its end no longer matters
    await Promise.race([done, settled]);
    if (!started) time.fireNext();
  }
  await done;
}

/** The virtual clock asked for, starting at the machine's now (so the server's timestamps are near it). */
function clockOf(options: TestOperatorOptions): VirtualClock | undefined {
  const asked = options.clock ?? "real";
  if (asked === "real") return undefined;
  if (asked === "virtual") return new VirtualClock();
  throw new Error(`startOperator({ clock }): "real" or "virtual", got ${JSON.stringify(asked)}`);
}

async function ensureNamespace(client: KubeClient, name: string): Promise<void> {
  const namespaces = await client.resolve("v1/namespaces");
  try {
    await client.get(namespaces, null, name);
  } catch (error) {
    if (!isNotFound(error)) throw error;
    await client.create(namespaces, null, { apiVersion: "v1", kind: "Namespace", metadata: { name } });
  }
}
