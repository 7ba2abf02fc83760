// What a Reconciler is built from: its options, the part of the settings it reads, and the
// handling engine's environment derived from them (the defaults, the diff base policy).

import type { KubeClient } from "../kube/index.ts";
import { resourceName, type KubeObject, type Resource } from "../kube/index.ts";
import type { EventPoster } from "../posting/index.ts";
import type { Logger } from "../util/index.ts";
import type { ApiClient } from "../handling/index.ts";
import type { CycleEnv } from "../handling/index.ts";
import { sensitiveFields } from "../handling/index.ts";
import type { StorageMode } from "../handling/index.ts";
import type { HandlerSpec, Registry } from "../declaring/index.ts";
import type { Indexes } from "../handling/index.ts";
import type { QueueObserver } from "../queueing/index.ts";
import type { PatchTarget } from "./patching.ts";
import type { KnownObjects, OwnWrites } from "../caching/index.ts";
import type { CacheLookup } from "../handling/index.ts";
import type { ReconcileBackoff } from "./reconcile/reconcile-run.ts";
import type { EchoBooks } from "./reconcile/echo-scope.ts";

/** A cycle's hold on its object's shard (sharding/holds.ts' ShardHold, as this room sees it). */
export interface CycleHold {
  signal: AbortSignal;
  /** Still this cycle's to write for? false also aborts `signal` (a lease that lapsed in a stall). */
  current?(): boolean;
  exit(): void;
}

export interface ReconcilerOptions {
  client: Pick<KubeClient, "patch" | "get">;
  /** The resolved resource (see `client.resolve(selector)` for each of `registry.selectors()`). */
  resource: Resource;
  registry: Registry;
  /**
   * Every timing and limit (the workers', the handlers' defaults, the diff base's, the freeze
   * grace): config/'s resolved settings, whose schema is the one place defaults are written; the
   * one way to set them (tests resolve theirs too: `resolveSettings({ fileData })`).
   */
  settings: ReconcilerSettings;
  logger?: Logger;
  poster?: EventPoster;
  /** The client handlers get as `ctx.api` (the runtime's, with its field manager and watches). */
  api?: ApiClient;
  /** The operator's indexes (all resources'): kept from this resource's events, lent to its handlers. */
  indexes?: Indexes;
  /** The operator's memo (on.startup's): each object's memo starts as a shallow copy of it. */
  memo?: Record<string, any>;
  /** Where to keep progress for resources with a status subresource. Default "status" (see progress.ts). */
  storage?: StorageMode;
  /**
   * The resource is watched metadata-only, for this reason: handlers reading ctx.spec or
   * ctx.status get an error saying so, and the server's full answers to our writes are cut
   * down to metadata (the next cycle must not diff a full object against partial ones).
   */
  metadataOnly?: string;
  /** What takes objects away from this replica; none: they are always ours. */
  ownership?: Ownership;
  /** The resource's `on.reconcile` world (reconcile-mode.ts): needed when it has one. */
  reconcile?: ReconcileWiring;
  /** Who hears of the work (runtime/metrics.ts makes them metrics); none by default. */
  observers?: ReconcilerObservers;
  /** Aborting it aborts the handlers at once (like close(0)). */
  signal?: AbortSignal;
}

/** How the runtime hands a reconciled resource its world. */
export interface ReconcileWiring {
  /** The resource's own store (it must keep bodies) and our writes laid over it. */
  store: KnownObjects;
  writes: OwnWrites;
  /** Every store `ctx.cache` may read: the resource's, what it owns and watches, the indexes' resources. */
  cache: CacheLookup;
  /** Wait for the store to catch up with our own last write before a woken reconcile (else read through). */
  readOwnWrites: boolean;
  /** That wait's bound, ms. */
  catchUpMs: number;
  backoff: ReconcileBackoff;
  /**
   * The owned resources' echoes (reconcile/echo-scope.ts); none: every echo wakes (`reconcile.quietEchoes` off,
   * or `readOwnWrites` off).
   */
  echoes?: EchoBooks | undefined;
}

/** What takes objects away from this replica (ownership is exclusive: DESIGN behaviour 4). */
export interface Ownership {
  /**
   * The running signal of the freeze gate of this namespace (undefined: cluster-scoped): it
   * aborts when the objects there are taken away, and is aborted while they are frozen. A frozen
   * object's queued item or due retry is dropped unhandled: another operator owns it, and the
   * relist on resume brings it back (seed 000). A freeze aborts the handlers running there and
   * discards their cycles (ownership.ts).
   */
  freezeSignal?(namespace: string | undefined): AbortSignal;
  /**
   * Sharding: a cycle's hold on its object's shard, taken when the cycle starts. Its signal
   * aborts when the shard is handed over (like a freeze: nothing is written after it);
   * `exit()` when the cycle ended or was abandoned, so the handover waits for it.
   */
  hold?(object: KubeObject): CycleHold;
}

/** Who hears of a reconciler's work, without it knowing who listens. */
export interface ReconcilerObservers {
  /** Every cycle, handler run, failed write and abandoned run. */
  cycles?: ReconcileObserver;
  /** The object queue's adds, waits and work (the workqueue_* metrics). */
  queue?: QueueObserver;
}

/** The part of config/'s Settings the reconciler reads (in seconds, as configured; diffBaseLimit in bytes). */
export interface ReconcilerSettings {
  readonly peering: { readonly freezeGracePeriod: number };
  readonly workers: {
    readonly limit: number; readonly batchWindow: number; readonly idleTimeout: number; readonly priority: boolean;
  };
  readonly handling: {
    readonly retries: number | null; readonly backoff: number; readonly timeout: number | null;
    readonly diffBaseLimit: number;
  };
}

/** controller-runtime's reconcile results: an error, asked to run again now or after a delay, or done. */
export type ReconcileResult = "success" | "error" | "requeue" | "requeue_after";

/** What the reconciler tells about its work, without knowing who listens (runtime/ wires the metrics). */
export interface ReconcileObserver {
  /** One object's cycle began: one worker more is busy. */
  began(): void;
  /** That cycle ended with `result` after `seconds`. */
  reconciled(result: ReconcileResult, seconds: number): void;
  /** A reconcile failed for good (a PermanentError): controller-runtime's terminal error, not retried. */
  terminalError(): void;
  /** One handler ran in a cycle: its id, the cause, its outcome (success, retry, failure) and how long. */
  handlerRan(handler: string, cause: string, outcome: string, seconds: number): void;
  /** A cycle's results could not be written: it runs again after a backoff. */
  writeFailed(): void;
  /** A cycle's write was refused as too large: not retried until the object changes (refusal.ts). */
  writeRefused(): void;
  /** A handler ignored a freeze past its grace period and was left behind (ownership.ts). */
  handlerAbandoned(): void;
  /** A daemon or timer ignored its stop signal past its cancellationTimeout and was left behind. */
  backgroundAbandoned(): void;
}

/**
 * Whether a reconciler of `resource` reads a deleted object's body beyond its identity
 * (caching/identity.ts): its on.event handlers do; the rest of a deletion needs
 * only which object it was (and its finalizers).
 */
export function readsDeletedBodies(registry: Registry, resource: Resource): boolean {
  return registry.forResource(resource).some((h) => h.kind === "event");
}

/** The engine's environment for the resource's changing handlers, and its on.event handlers apart. */
export function cycleEnvOf(options: ReconcilerOptions, logger: Logger): { env: CycleEnv; events: HandlerSpec[] } {
  const { resource, registry, settings } = options;
  const all = registry.forResource(resource);
  const changing = all.filter((h) => h.kind !== "event");
  const events = all.filter((h) => h.kind === "event");
  const env: CycleEnv = {
    resource,
    handlers: changing,
    ids: [...new Set(changing.map((h) => h.id))],
    hasResume: changing.some((h) => h.kind === "resume"),
    defaults: {
      retries: settings.handling.retries,
      backoff: settings.handling.backoff,
      timeout: settings.handling.timeout,
    },
    diffBase: {
      sensitive: sensitiveFields(resource, all.flatMap((h) => h.sensitive ?? [])),
      limit: settings.handling.diffBaseLimit,
    },
    logger,
    tools: {
      api: options.api, poster: options.poster, ...(options.indexes ? { indexes: options.indexes.view } : {}),
      ...(options.metadataOnly
        ? { metadataOnly: `${resourceName(resource)} is watched metadata-only (${options.metadataOnly})` }
        : {}),
    },
  };
  return { env, events };
}

/** Where the resource's cycles write: kobun's bookkeeping in status.kobun when it has a status subresource. */
export function patchTargetOf(options: ReconcilerOptions, logger: Logger): PatchTarget {
  const { resource } = options;
  return {
    client: options.client,
    resource,
    storage: { mode: resource.statusSubresource ? (options.storage ?? "status") : "annotations" },
    logger,
    ...(options.metadataOnly ? { metadataOnly: true } : {}),
  };
}

/** The workers' timing in ms (the settings are in seconds). */
export function workerTimingOf(
  { settings }: Pick<ReconcilerOptions, "settings">,
): { window: number; limit: number; idleMs: number; prioritized: boolean } {
  const { batchWindow, limit, idleTimeout, priority } = settings.workers;
  return { window: batchWindow * 1000, limit, idleMs: idleTimeout * 1000, prioritized: priority };
}

/** How long handlers may go on after a freeze before they are abandoned, in ms. */
export function freezeGraceMsOf({ settings }: Pick<ReconcilerOptions, "settings">): number {
  return settings.peering.freezeGracePeriod * 1000;
}
