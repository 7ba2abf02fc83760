// The operator: wires config, the client, peering, watchers, queues and handlers into one
// task scope, and takes it all down again. `run()` settles only when everything it started
// has ended (seed 003): watch streams are aborted at once, handlers get the grace period
// through their `signal`, the peering record is removed, the event poster flushes.
// Signal handlers are NOT installed here: a library must not steal signals; the CLI passes
// SIGINT/SIGTERM in as `signal`.

import { loginOf, probeValues, runCleanup, runStartup, StartupError } from "../activities/index.ts";
import { resolveSettings, type Settings } from "../config/index.ts";
import { registry as defaultRegistry, type Registry } from "../declaring/index.ts";
import { Indexes } from "../handling/index.ts";
import { resourceName, type KubeClient, type KubeObject, type Resource } from "../kube/index.ts";
import { Health } from "../observability/index.ts";
import { newPeerId } from "../peering/index.ts";
import { EventPoster } from "../posting/index.ts";
import { PermissionsLacking } from "../streams/index.ts";
import { aborted, TaskScope, Toggle, type Logger } from "../util/index.ts";
import { connectClient } from "./connecting.ts";
import { FatalError } from "./exits.ts";
import { CachedResources } from "./reconcile-wiring.ts";
import { handlerApi } from "./handler-api.ts";
import { CodeTrimmer, compiledExecutable } from "./code-pages.ts";
import { LeanStartup } from "./lean-startup.ts";
import { heapActivity, paceHeap, pacerAwake, pacerWakes, whenQuiet } from "./heap-pacing.ts";
import { loggerFor } from "./logging.ts";
import { reportLoginRenewals } from "./login-health.ts";
import { requestMetrics } from "./metrics.ts";
import { serve, startParts, type Operating } from "./parts.ts";
import { checkResourceKeys, disabledIndexes, disabledReconcileReads } from "./resources.ts";
import { resolveResources } from "./served-resources.ts";
import { flushWhile, shutDown } from "./shutdown.ts";
import { startTracing } from "./tracing.ts";

/** What `run()` takes; every field may be omitted. */
export interface RunOptions {
  /** Aborting it stops the operator gracefully; `run()` resolves when all is ended. */
  signal?: AbortSignal;
  /** Validated settings (see `resolveSettings`); defaults when omitted. */
  settings?: Settings;
  /** A ready client (on.login is not asked then); otherwise one is built from `settings.kube`, or from on.login. */
  client?: KubeClient;
  /** The handlers to run; the global registry that `on.*` fills when omitted. */
  registry?: Registry;
  /**
   * CRDs shipped beside the handlers (YAML; `kobun run` passes them): with those of defineResource,
   * their kinds, singular and short names may key kobun.yaml's `resources:`, as in `kobun manifests`.
   */
  crds?: KubeObject[];
  /** Where the operator's lines go (e.g. `new Logger(memorySink("info"))`); default from `settings.logging`. */
  logger?: Logger;
  /**
   * Shared with every handler and activity as `ctx.memo` (Kopf's `memo`): each object's memo starts
   * as a shallow copy of it, activities get this object itself. Default: a fresh `{}`.
   */
  memo?: Record<string, any>;
  /** The freeze toggle; pass one to freeze/resume the operator from outside (tests, embedders). */
  toggle?: Toggle;
  /** The user named the peering object (`--peering`): if its resource is missing, stay frozen. */
  peeringMandatory?: boolean;
  /**
   * This operator's peer id; default POD_ID, else user@host/start-time/random, made for each run() (two in
   * one process are two peers; with POD_ID set they share it: pass distinct ids).
   */
  peerId?: string;
  /**
   * Called once every watcher has been started (not necessarily listed). If it (or onReady) throws, the
   * operator stops as on `signal` and run() rejects with what it threw.
   */
  onStarted?(info: StartedInfo): void;
  /**
   * Called once every watcher's initial LIST has been processed (what /readyz waits for): an object
   * created after it arrives as created, not listed. Never called for a replica that stays frozen.
   */
  onReady?(info: StartedInfo): void;
}

/** What onStarted and onReady are told. */
export interface StartedInfo {
  resources: Resource[];
  health: Health;
  probeUrl?: string;
}

/** What `run()` resolves with after a clean shutdown. */
export interface RunReport {
  /** Tasks (usually handlers) that ignored their signal past the grace period and were abandoned. */
  abandoned: string[];
}

/**
 * Runs the operator until `signal` aborts. Rejects with a FatalError (its `exitCode` is the
 * README's) when it cannot start, or when a task ends it: then only after a clean shutdown; with a
 * ConfigError (`exitCode` 3) before connecting, when kobun.yaml's `resources:` do not fit the handlers.
 */
export async function run(options: RunOptions = {}): Promise<RunReport> {
  const given = options.settings ?? resolveSettings({});
  const registry = options.registry ?? defaultRegistry;
  // Before connecting: a resource key naming no handler's resource (or several) is a config error;
  // the others are re-keyed by the selector they name.
  const crds = [...(options.crds ?? []), ...registry.definitions()];
  const settings = checkResourceKeys(given, registry.selectors(), registry.aliases.all(), crds);
  const logger = options.logger ?? loggerFor(settings);
  const signal = options.signal ?? new AbortController().signal;
  const graceMs = settings.shutdown.gracePeriod * 1000;
  if (signal.aborted) return { abandoned: [] };
  warnIfIdle(registry, logger);

  const stopTracing = await startTracing(settings, logger);
  try {
    // One id per run(), shared by its peerings, lease and shards: two run()s in one process are two peers.
    const id = options.peerId ?? (settings.peering.standalone && !settings.sharding.enabled ? undefined : newPeerId());
    const peering = { mandatory: options.peeringMandatory ?? false, ...(id ? { id } : {}) };
    return await withClient({ options, settings, logger, registry, signal, graceMs, peering });
  } finally {
    await stopTracing?.();
    logger.sink.flush?.(); // repeated lines still counted are summarised before the process ends
  }
}

/**
 * The client's life around operate(): the given one, or one made here (with on.login's credentials
 * if there are login handlers), observed for the request metrics and the heap pacer while it runs.
 */
async function withClient(o: Omit<Running, "client" | "health" | "memo">): Promise<RunReport> {
  const { options, settings, logger, registry, signal } = o;
  const ownClient = options.client === undefined;
  /** Shared by every handler and activity (login included). */
  const memo = options.memo ?? {};
  // on.login replaces the kubeconfig's credentials of a client run() makes (a given one is used as it is).
  const requestTimeoutMs = settings.kube.requestTimeout * 1000;
  const login = ownClient ? loginOf({ registry, logger, memo }, signal, requestTimeoutMs) : undefined;
  const client = options.client ?? (await connectClient(settings, logger, signal, login));
  const health = new Health();
  reportLoginRenewals(client.connection, health, signal);
  const unobserve = client.observe(requestMetrics(health.metrics));
  const unobserveHeap = client.observe({ requested: heapActivity }); // an answer wakes a sleeping heap pacer
  try {
    return await operate({ ...o, client, health, memo });
  } finally {
    unobserve();
    unobserveHeap();
    // A client run() made is run()'s to close (its keep-alive pool); a given one is the caller's.
    if (ownClient) client.close();
  }
}

/** What operate() runs with: the parts' materials, and what run()'s caller asked. */
interface Running extends Operating {
  options: RunOptions;
}

/** Starts the operator's parts, serves until `signal` aborts or a task ends it, then takes them down. */
async function operate(o: Running): Promise<RunReport> {
  const { settings, logger, registry, signal, graceMs, client, health } = o;
  const cached = new CachedResources(); // the stores on.reconcile reads, with our writes over them
  // Made before startup: on.startup gets them (empty until the watches list), on.probe reads them.
  // A reconcile's children are read from their stores: their first LISTs hold handlers as an index's do.
  const indexes = new Indexes(registry.indexes, logger, undefined, (r) => registry.reconciles.readsChildren(r));
  const api = handlerApi(client, settings, logger, cached);
  // Made before the startup handlers, whose ctx.event it serves: their Events wait for the scope to send them.
  const { enabled, level, logs } = settings.posting;
  const poster = new EventPoster({ client, logger, enabled, level, logs });
  const activities = { registry, logger, api, memo: o.memo, indexes: indexes.view, poster };
  const { retries, backoff, timeout } = settings.handling;
  // Before any watch: a failure for good ends run() with a FatalError (exit 6), nothing was started.
  const startup = await runStartup(activities, signal, { retries, backoff, timeout }, graceMs).catch((error) => {
    throw error instanceof StartupError ? new FatalError("startup", error.message, { cause: error.cause }) : error;
  });
  if (signal.aborted) return startup; // stopped while starting up: nothing else was started
  const probes = probeValues(activities);
  if (probes) health.probes = probes;
  const resolved = await resolveResources(client, settings, registry, signal);
  if (signal.aborted) return { abandoned: [] };
  for (const [resource, why] of resolved.metadataOnly) {
    logger.info("watching metadata-only", { resource: resourceName(resource), why });
  }
  for (const gone of disabledIndexes(settings, registry.indexes, registry.aliases.all())) {
    logger.warn("an index stays empty: its resource is disabled in kobun.yaml", gone);
  }
  for (const gone of disabledReconcileReads(settings, registry.reconciles.specs, registry.aliases.all())) {
    logger.warn("a reconcile's ctx.cache cannot read what it owns or watches, nor is it woken by it: " +
      "the resource is disabled in kobun.yaml", gone);
  }

  const toggle = o.options.toggle ?? new Toggle();
  const { scope, fatal, fatalReported } = operatorScope(signal, logger, health);
  const lean = handBackMemory(settings, logger, scope.signal);
  const parts = await startParts(o, { api, cached, resolved, toggle, scope, indexes, poster });
  const { probeUrl, handlersFinished } = await serve(o, parts);
  const info: StartedInfo = { resources: resolved.resources, health, ...(probeUrl ? { probeUrl } : {}) };
  const embedder = embedderCallbacks();
  embedder.call(() => o.options.onStarted?.(info));
  const names = resolved.resources.map(resourceName).join(",");
  logger.info("operator started", { resources: names, namespaces: describeNamespaces(settings) });
  void health.readiness.listed(scope.signal).then((listed) => {
    // A stopping operator's streams end, which releases their gates: that is no readiness to report.
    if (!listed || scope.signal.aborted || fatal.error) return;
    logger.info("operator ready: every watch has listed", { resources: names });
    lean?.listed();
    embedder.call(() => o.options.onReady?.(info));
  });

  await Promise.race([aborted(signal), fatalReported, embedder.failed]);
  const { reconcilers } = parts;
  const report = await shutDown({ settings, logger, graceMs, scope, reconcilers, poster, handlersFinished });
  await flushWhile(poster, runCleanup(activities, graceMs)); // the cleanup handlers' Events
  if (fatal.error) throw fatal.error;
  if (embedder.error) throw embedder.error.thrown;
  return report;
}

/**
 * Calls run()'s onStarted and onReady: one that throws stops the operator as a signal would (every task
 * closed, holds released), then run() rejects with what it threw, instead of leaving it all running.
 */
function embedderCallbacks(): { call(callback: () => void): void; failed: Promise<void>; error?: { thrown: unknown } } {
  const { promise: failed, resolve: fail } = Promise.withResolvers<void>();
  const callbacks: ReturnType<typeof embedderCallbacks> = {
    failed,
    call(callback) {
      try {
        callback();
      } catch (thrown) {
        callbacks.error ??= { thrown };
        fail();
      }
    },
  };
  return callbacks;
}

/**
 * The operator's task scope. A task may end the operator (a 403 that retrying cannot cure):
 * it stops as on a signal (`fatalReported`), then run() throws `fatal.error`.
 */
function operatorScope(
  signal: AbortSignal, logger: Logger, health: Health,
): { scope: TaskScope; fatal: { error?: FatalError }; fatalReported: Promise<void> } {
  const fatal: { error?: FatalError } = {};
  const { promise: fatalReported, resolve: stopFatally } = Promise.withResolvers<void>();
  const scope = new TaskScope("operator", signal, (name, error, within) => {
    const message = error instanceof Error ? error.message : String(error);
    // A 403 that retrying cannot cure (streams/forbidden.ts) ends the operator with exit 5.
    const ending = error instanceof PermissionsLacking
      ? new FatalError("fatal", message, { cause: error.cause })
      : error;
    if (ending instanceof FatalError) {
      logger.error("fatal error; stopping", { task: name, error: message });
      fatal.error ??= ending;
      return stopFatally();
    }
    logger.error("task failed", { task: name, error: message });
    // Nothing restarts a failed task: it stays a problem until its scope (a namespace, or the operator) ends.
    health.component(`${within.name}/${name}`, within.signal).fail(message);
  });
  paceHeap(scope.signal); // while the operator lives: a burst's garbage would stay the process's RSS
  return { scope, fatal, fatalReported };
}

/**
 * The start-up's code pages go back to the kernel now, before the streams start, and a burst's once it is over
 * (runtime/code-pages.ts); the first sync runs lean (runtime/lean-startup.ts) until it is over. Only in a
 * compiled executable: under `bun run` or `bun test` the pages are Bun's, shared by every script it runs, and
 * the JIT's policy the test runner's too.
 */
function handBackMemory(settings: Settings, logger: Logger, signal: AbortSignal): LeanStartup | undefined {
  if (!compiledExecutable()) return undefined;
  const activity = { quiet: () => !pacerAwake(), wakes: pacerWakes };
  const { trimCodePages: trims, leanStartup } = settings.memory;
  const trimmer = trims ? new CodeTrimmer(logger, activity) : undefined;
  trimmer?.now();
  const trimQuietly = () => trimmer?.now({ logged: false }) ?? false;
  const lean = leanStartup ? new LeanStartup(logger, activity, trimQuietly) : undefined;
  whenQuiet(signal, () => {
    lean?.quiet();
    trimmer?.quiet();
  });
  signal.addEventListener("abort", () => {
    lean?.stop();
    trimmer?.stop();
  }, { once: true });
  return lean;
}

/**
 * An operator that watches nothing and serves no webhook has nothing to do: most often its handlers
 * were never imported (a test file, an entry point). It still runs (its activities may be the point).
 */
function warnIfIdle(registry: Registry, logger: Logger): void {
  if (registry.selectors().length || registry.webhooks.length || registry.conversions.length) return;
  const activities = registry.activities.map((a) => `on.${a.kind} ${a.id}`).join(", ") || "none";
  logger.warn("no handlers registered: the operator watches nothing. Was the module that registers them " +
    "(on.create, on.reconcile, …) imported before run()?", { activities });
}

function describeNamespaces(settings: Settings): string {
  if (settings.namespaces.allNamespaces || settings.namespaces.include.length === 0) return "*";
  return settings.namespaces.include.join(",");
}
