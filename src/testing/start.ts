// startOperator(): a sandbox, the handlers' CRDs installed into it, and the operator running in
// this process, its log kept in memory (`kit.logs`) and, from `logLevel`, on stderr too.

import { resolveSettings, type FlagValues } from "../config/index.ts";
import type { Registry } from "../declaring/index.ts";
import { registry as defaultRegistry } from "../declaring/index.ts";
import { isNotFound } from "../kube/index.ts";
import { KubeClient } from "../kube/index.ts";
import { applyManifests, startSandbox } from "../runtime/dev.ts";
import { manifestCRDs, run, withDefinitions, type Manifest } from "../runtime/index.ts";
import { Logger, memorySink, stderrSink, teeSink, useClock, VirtualClock } from "../util/index.ts";
import type { LogLevel, LogSink, MemorySink, Toggle } from "../util/index.ts";
import { quiet } from "./advance.ts";
import { TestOperator } from "./operator.ts";
import { checkOptions, readCrds } from "./options.ts";

export interface TestOperatorOptions {
  /** The namespace the operator watches and objects go to by default (default "default"; created if missing). */
  namespace?: string;
  /** CRD files (YAML) to install besides those of defineResource's resources, e.g. handlers/my.crd.yaml. */
  crds?: string[];
  /** More `kobun run` flags, as parsed (e.g. { config: "kobun.yaml" }); namespaces and standalone are the kit's. */
  flags?: Partial<FlagValues>;
  /** The handlers to run (default: the registry that `on.*` fills). */
  registry?: Registry;
  /** The default bound of `until`, `gone`, `events` and `logs.until`, in ms (default 5000). */
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
   * operator is ready, startOperator resolves only once it is unfrozen and ready.
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
  let client: KubeClient | undefined;
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
    const stop = new AbortController();
    const failure = new AbortController();
    let started!: () => void;
    const ready = new Promise<void>((resolve) => (started = resolve));
    const memo = options.memo ?? {};
    restoreClock = clock ? useClock(clock) : noop;
    // The CRD files' names key kobun.yaml's resources (flags.config) as in `kobun run`.
    const crds = manifestCRDs(manifests);
    const toggle = options.toggle ? { toggle: options.toggle } : {};
    const onReady = () => started();
    const running = run({ signal: stop.signal, settings, registry, logger, memo, crds, ...toggle, onReady }).then(
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
    const starting = Promise.race([ready, endedFirst]);
    await (clock ? fireWhileStarting(clock, starting, failure.signal) : starting);
    return new TestOperator({
      sandbox, client, namespace, operatorStop: stop, failed: failure.signal, running, logger, logs,
      timeoutMs: options.timeout ?? 5000, clock, restoreClock,
    });
  } catch (error) {
    restoreClock();
    client?.close();
    await sandbox.stop();
    throw error;
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
