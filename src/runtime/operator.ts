// The operator: wires config, the client, peering, watchers, queues and handlers into one
// task scope, and takes it all down again. `run()` settles only when everything it started
// has ended (seed 003): watch streams are aborted at once, handlers get the grace period
// through their `signal`, the peering record is removed, the event poster flushes.
// Signal handlers are NOT installed here: a library must not steal signals; the CLI passes
// SIGINT/SIGTERM in as `signal`.

import { fixedNamespaces, resolveSettings, type ResourceSettings, type Settings } from "../config/index.ts";
import type { KubeClient } from "../kube/index.ts";
import { resourceName, type KubeObject, type Resource } from "../kube/index.ts";
import type { Logger } from "../util/index.ts";
import { loggerFor } from "./logging.ts";
import { TaskScope } from "../util/index.ts";
import { aborted } from "../util/index.ts";
import { Toggle } from "../util/index.ts";
import { Health } from "../observability/index.ts";
import { registry as defaultRegistry, type Registry } from "../declaring/index.ts";
import { Reconciler } from "../reconciling/index.ts";
import { Indexes } from "../handling/index.ts";
import { loginOf, probeValues, runCleanup, runStartup } from "./activities.ts";
import { connectClient } from "./connecting.ts";
import { reportLoginRenewals } from "./login-health.ts";
import { EventPoster } from "../posting/index.ts";
import { PermissionsLacking } from "../streams/index.ts";
import { knownObjectStores, serveLayout } from "./stream-wiring.ts";
import { FatalError } from "./exits.ts";
import { startTracing } from "./tracing.ts";
import { frozenMetric, reconcileMetrics, requestMetrics, workqueueMetrics } from "./metrics.ts";
import { serveProbes } from "./serving.ts";
import { heapActivity, paceHeap } from "./heap-pacing.ts";
import { handlerApi } from "./handler-api.ts";
import type { ApiClient } from "../handling/index.ts";
import type { ShardedStreams } from "./sharding.ts";
import { checkResourceKeys, disabledIndexes, enabledWebhooks, resolveResources, settingsFor } from "./resources.ts";

/** Time peering gets, after the handlers' grace period, to remove its record or release the lease. */
const PEERING_EXIT_MS = 2500;
/**
 * Time the Events still queued get at least, from the start of the shutdown: they are sent while
 * the handlers finish. Events are best-effort: the shutdown does not wait on them; the rest is dropped.
 */
const EVENT_FLUSH_MS = 10;
/** How often the queue is looked at while handlers close (each look is a no-op when it is empty). */
const FLUSH_POLL_MS = 5;

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
  logger?: Logger;
  /** The freeze toggle; pass one to freeze/resume the operator from outside (tests, embedders). */
  toggle?: Toggle;
  /** The user named the peering object (`--peering`): if its resource is missing, stay frozen. */
  peeringMandatory?: boolean;
  /** This operator's peer id; default POD_ID or user@host/start-time/random. */
  peerId?: string;
  /** Called once every watcher has been started (not necessarily listed). */
  onStarted?(info: { resources: Resource[]; health: Health; probeUrl?: string }): void;
}

/** What `run()` resolves with after a clean shutdown. */
export interface RunReport {
  /** Tasks (usually handlers) that ignored their signal past the grace period and were abandoned. */
  abandoned: string[];
}

/**
 * Runs the operator until `signal` aborts. Rejects with a FatalError (its `exitCode` is the
 * README's) when it cannot start, or when a task ends it: then only after a clean shutdown.
 */
export async function run(options: RunOptions = {}): Promise<RunReport> {
  const settings = options.settings ?? resolveSettings({});
  const logger = options.logger ?? loggerFor(settings);
  const registry = options.registry ?? defaultRegistry;
  const signal = options.signal ?? new AbortController().signal;
  const graceMs = settings.shutdown.gracePeriod * 1000;
  if (signal.aborted) return { abandoned: [] };
  // Before connecting: a resource key naming no handler's resource is a config error.
  checkResourceKeys(settings, registry.selectors(), registry.aliases.all());

  const stopTracing = await startTracing(settings, logger);
  try {
    const ownClient = options.client === undefined;
    /** Shared by every handler and activity (login included). */
    const memo: Record<string, any> = {};
    // on.login replaces the kubeconfig's credentials of a client run() makes (a given one is used as it is).
    const login = ownClient ? loginOf({ registry, logger, memo }, signal, settings.kube.requestTimeout * 1000) : undefined;
    const client = options.client ?? (await connectClient(settings, logger, signal, login));
    const health = new Health();
    reportLoginRenewals(client.connection, health, signal);
    const unobserve = client.observe(requestMetrics(health.metrics));
    const unobserveHeap = client.observe({ requested: heapActivity }); // an answer wakes a sleeping heap pacer
    try {
      return await operate(options, settings, logger, registry, signal, graceMs, client, health, memo);
    } finally {
      unobserve();
      unobserveHeap();
      // A client run() made is run()'s to close (its keep-alive pool); a given one is the caller's.
      if (ownClient) client.close();
    }
  } finally {
    await stopTracing?.();
    logger.sink.flush?.(); // repeated lines still counted are summarised before the process ends
  }
}

async function operate(
  options: RunOptions, settings: Settings, logger: Logger, registry: Registry, signal: AbortSignal, graceMs: number, client: KubeClient, health: Health,
  memo: Record<string, any>,
): Promise<RunReport> {
  const api = handlerApi(client, settings, logger);
  const activities = { registry, logger, api, memo };
  // Before any watch: a failure ends run() with a FatalError (exit 6), nothing was started.
  await runStartup(activities, signal);
  const probes = probeValues(activities);
  if (probes) health.probes = probes;
  const { resources, configs, metadataOnly } = await resolveResources(client, settings, registry, signal);
  if (signal.aborted) return { abandoned: [] };
  for (const [resource, why] of metadataOnly) logger.info("watching metadata-only", { resource: resourceName(resource), why });
  for (const gone of disabledIndexes(settings, registry.indexes, registry.aliases.all())) logger.warn("an index stays empty: its resource is disabled in kobun.yaml", gone);

  const toggle = options.toggle ?? new Toggle();
  const { scope, fatal, fatalReported } = operatorScope(signal, logger, health);
  const poster = new EventPoster({ client, logger, enabled: settings.posting.enabled, level: settings.posting.level, logs: settings.posting.logs });
  /** The gates of namespaces with a peering of their own; others follow the operator's toggle. */
  const gates = new Map<string, Toggle>();
  const indexes = new Indexes(registry.indexes, logger);
  for (const [resource, why] of metadataOnly) indexes.metadataOnly.set(resource, `${resourceName(resource)} is watched metadata-only (${why})`);
  const sharded = settings.sharding.enabled
    ? await (await import("./sharding.ts")).startSharding({
      client, settings, logger, scope, toggle, resources, namespace: fixedNamespaces(settings)?.[0] ?? null, metrics: health.metrics, ...(registry.indexes.length ? { indexes } : {}), ...(options.peerId ? { id: options.peerId } : {}),
    }, signal)
    : undefined;
  const stores = knownObjectStores(registry, resources); // one per resource: its streams write it (caching/)
  const reconcilers = reconcilersFor(resources, { client, registry, settings, logger, poster, api, health, toggle, gates, sharded, indexes, memo: activities.memo, configs, metadataOnly });

  const probeUrl = await serveProbes(settings, health, scope, logger);
  const frozen = frozenMetric(health.metrics);
  frozen("operator", toggle, signal);
  health.readiness.frozenBy(() => toggle.reasons(), settings.probes.readiness === "frozen-is-ready", sharded?.standbyHolders);

  // Imported only when there are webhooks: the server, certificates and X.509 code cost an
  // operator without them ~0.6 MB of RSS (sharding, above, likewise ~0.8 MB).
  // A resource with enabled: false has no webhooks either (conversions stay: the CRD needs them).
  const admissions = { webhooks: enabledWebhooks(settings, registry.webhooks, registry.aliases.all()), conversions: registry.conversions };
  if (admissions.webhooks.length || admissions.conversions.length) {
    await (await import("./webhooks.ts")).serveWebhooks({ client, registry: admissions, settings, logger, scope, signal }).catch(async (error) => { await scope.close(0); throw error; });
  }
  poster.start(scope);
  // Peering leaves only once the handlers have finished: no other operator starts on objects still handled here.
  const { promise: handlersDone, resolve: handlersFinished } = Promise.withResolvers<void>();
  serveLayout({
    client, settings, logger, health, toggle, scope, graceMs, sharded, indexes,
    resources: { reconcilers, stores, configs, metadataOnly },
    gates: { byNamespace: gates, frozen },
    peering: { mandatory: options.peeringMandatory ?? false, handlersDone, ...(options.peerId ? { id: options.peerId } : {}) },
  });
  options.onStarted?.({ resources, health, ...(probeUrl ? { probeUrl } : {}) });
  logger.info("operator started", { resources: resources.map(resourceName).join(","), namespaces: describeNamespaces(settings) });

  await Promise.race([aborted(signal), fatalReported]);
  const report = await shutDown(settings, logger, graceMs, scope, reconcilers, poster, handlersFinished);
  await runCleanup(activities, graceMs);
  if (fatal.error) throw fatal.error;
  return report;
}

interface ReconcilerWiring {
  client: KubeClient;
  registry: Registry;
  settings: Settings;
  logger: Logger;
  poster: EventPoster;
  /** What handlers get as ctx.api. */
  api: ApiClient;
  health: Health;
  toggle: Toggle;
  gates: Map<string, Toggle>;
  sharded: ShardedStreams | undefined;
  indexes: Indexes;
  memo: Record<string, any>;
  /** kobun.yaml entries: their workers and handling override the global ones per resource. */
  configs: Map<Resource, ResourceSettings>;
  /** The resources watched metadata-only, and why: their progress lives in annotations. */
  metadataOnly: Map<Resource, string>;
}

/** One reconciler per resource; their handlers stop when their namespace's gate (or the operator's toggle) freezes. */
function reconcilersFor(resources: Resource[], w: ReconcilerWiring): Map<Resource, Reconciler> {
  /** Aborts when objects of this namespace are taken away: running handlers there stop (ownership is exclusive). */
  const freezeSignal = (namespace: string | undefined) => ((namespace !== undefined && w.gates.get(namespace)) || w.toggle).runningSignal;
  const reconcilers = new Map<Resource, Reconciler>();
  for (const resource of resources) {
    const name = resourceName(resource);
    const logger = w.logger.child({ resource: name });
    const config = w.configs.get(resource);
    const settings = settingsFor(w.settings, config);
    const observers = { cycles: reconcileMetrics(w.health.metrics, name, settings.workers.limit), queue: workqueueMetrics(w.health.metrics, name) };
    const sharding = w.sharded?.sharding;
    // Sharded: each cycle holds its object's shard, so a handover waits for it.
    const ownership = sharding ? { freezeSignal, hold: (object: KubeObject) => sharding.hold(object) } : { freezeSignal };
    const partial = w.metadataOnly.get(resource);
    // A metadata-only watch never receives status: progress must live where it is received.
    const storage = partial ? { storage: "annotations" as const, metadataOnly: partial } : config && config.storage !== "auto" ? { storage: config.storage } : {};
    const { client, registry, poster, api, indexes, memo } = w;
    reconcilers.set(resource, new Reconciler({ client, resource, registry, settings, logger, poster, api, indexes, memo, ownership, observers, ...storage }));
  }
  w.sharded?.forgetIn([...reconcilers.values()]); // a shard given up or taken: its objects start afresh
  return reconcilers;
}

/**
 * Streams, peering and handlers are aborted together: watches close at once, handlers get
 * the grace period through their `signal`, peering removes its record meanwhile (after the
 * handlers finished: `handlersFinished`). The poster sends queued Events meanwhile, for
 * EVENT_FLUSH_MS or until the handlers finished, whichever is later (after a burst the queue
 * is long: flushing only once the handlers finished put the whole window on top of their close).
 */
async function shutDown(
  settings: Settings, logger: Logger, graceMs: number, scope: TaskScope, reconcilers: Map<Resource, Reconciler>, poster: EventPoster, handlersFinished: () => void,
): Promise<RunReport> {
  logger.info("stopping", { gracePeriod: settings.shutdown.gracePeriod });
  const handling = Promise.all([...reconcilers.values()].map((p) => p.close(graceMs))).finally(() => handlersFinished());
  const posting = flushAlongside(poster, handling, EVENT_FLUSH_MS);
  const [scopeReport, handlerReports] = await Promise.all([scope.close(graceMs + PEERING_EXIT_MS), handling, posting]);
  const report: RunReport = { abandoned: [...scopeReport.abandoned, ...handlerReports.flatMap((r) => r.abandoned)] };
  for (const task of report.abandoned) logger.warn("abandoned a task that ignored the stop signal past the grace period", { task });
  logger.info("stopped", { abandoned: report.abandoned.length });
  return report;
}

/**
 * Sends the poster's queue while `handling` runs — again and again, so what the closing handlers
 * post is sent as they post it (the poster's own loop has stopped with the scope) — until `ms`
 * have passed and the handlers finished: nothing is added after the later of the two, so what
 * they post in their very last moment may be dropped (Events are best-effort).
 */
async function flushAlongside(poster: EventPoster, handling: Promise<unknown>, ms: number): Promise<void> {
  let done = false;
  const finished = handling.then(() => void (done = true), () => void (done = true));
  const window = new AbortController();
  const timer = setTimeout(() => void finished.then(() => window.abort()), ms);
  try {
    // While the handlers close (the window aborts only after they finished).
    while (!done) {
      await poster.flush(window.signal);
      await Promise.race([finished, Bun.sleep(FLUSH_POLL_MS)]);
    }
    // What the last handlers posted, within what is left of the window.
    if (!window.signal.aborted) await poster.flush(window.signal);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The operator's task scope. A task may end the operator (a 403 that retrying cannot cure):
 * it stops as on a signal (`fatalReported`), then run() throws `fatal.error`.
 */
function operatorScope(signal: AbortSignal, logger: Logger, health: Health): { scope: TaskScope; fatal: { error?: FatalError }; fatalReported: Promise<void> } {
  const fatal: { error?: FatalError } = {};
  const { promise: fatalReported, resolve: stopFatally } = Promise.withResolvers<void>();
  const scope = new TaskScope("operator", signal, (name, error, within) => {
    const message = error instanceof Error ? error.message : String(error);
    // A 403 that retrying cannot cure (streams/forbidden.ts) ends the operator with exit 5.
    const ending = error instanceof PermissionsLacking ? new FatalError("fatal", message, { cause: error.cause }) : error;
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

function describeNamespaces(settings: Settings): string {
  if (settings.namespaces.allNamespaces || settings.namespaces.include.length === 0) return "*";
  return settings.namespaces.include.join(",");
}
