// The face of `on.*`: what each registration function takes and returns, and what it is for.
// Its own file because it is the part an operator author reads (docs/api.md shows it), in one
// piece; each kind's file under kinds/ implements its members, untyped, and registry.ts joins them.

import type { KubeObject, ResourceSelector } from "../kube/index.ts";
import type { FieldPath } from "./types.ts";
import type { ReconcileTarget, ResourceToken } from "./resource.ts";
import type { ActivityFn, ActivityOptions, LoginFn } from "./kinds/activities.ts";
import type { DaemonFn, DaemonOptions, TimerFn, TimerOptions } from "./kinds/background.ts";
import type {
  DeleteOptions, EventHandlerFn, EventOptions, FieldHandlerFn, FieldOptions, HandlerFn, HandlerOptions, UpdateOptions,
} from "./kinds/handlers.ts";
import type { IndexFn, IndexOptions } from "./kinds/indexing.ts";
import type { ReconcileFn, ReconcileOptions } from "./kinds/reconcile.ts";
import type { AdmissionOptions, ConversionTable, ConvertFn, MutateFn, ValidateFn } from "./kinds/webhooks.ts";

/**
 * What handlers are registered for: a selector string ("kobunexamples.kobun.dev/v1"; objects
 * untyped) or a typed token (`resource<T>(...)`, `resource.pods`; objects typed T).
 */
export type Target<T extends object> = ResourceSelector | ResourceToken<T>;

/**
 * The `on.*` registration functions (`on` from "kobun", or a `new Registry()`'s). Each returns the function it
 * registered; a typed token types the function's `ctx` (docs/handlers.md, the README's "Typed resources").
 */
export interface On {
  /** Runs once per object, when it is first seen (no diff base on it yet). */
  create<T extends object = KubeObject>(
    resource: Target<T>, fn: HandlerFn<T>, options?: HandlerOptions<T>,
  ): HandlerFn<T>;
  /** With `field`, runs only on updates that touch it; `old`/`new` match its value before and after. */
  update<T extends object = KubeObject>(
    resource: Target<T>, fn: HandlerFn<T>, options?: UpdateOptions<T>,
  ): HandlerFn<T>;
  /** Adds the finalizer `kobun.dev/finalizer` unless `{ optional: true }`. */
  delete<T extends object = KubeObject>(
    resource: Target<T>, fn: HandlerFn<T>, options?: DeleteOptions<T>,
  ): HandlerFn<T>;
  /** Runs on the first sight of an already-handled object after the operator starts. */
  resume<T extends object = KubeObject>(
    resource: Target<T>, fn: HandlerFn<T>, options?: HandlerOptions<T>,
  ): HandlerFn<T>;
  /** Runs when `options.field` changes (on creation too, when the field is set). */
  field<T extends object = KubeObject, P extends FieldPath<T> = FieldPath<T>>(
    resource: Target<T>, options: FieldOptions<T, P>, fn: FieldHandlerFn<T, P>,
  ): FieldHandlerFn<T, P>;
  /** Every watch event of the object: no progress, no retries, errors are logged. */
  event<T extends object = KubeObject>(
    resource: Target<T>, fn: EventHandlerFn<T>, options?: EventOptions<T>,
  ): EventHandlerFn<T>;
  /** An admission webhook: throw AdmissionError to refuse the request. */
  validate<T extends object = KubeObject>(
    resource: Target<T>, fn: ValidateFn<T>, options?: AdmissionOptions,
  ): ValidateFn<T>;
  /** An admission webhook: change `ctx.object` in place; kobun answers with the JSON Patch. */
  mutate<T extends object = KubeObject>(resource: Target<T>, fn: MutateFn<T>, options?: AdmissionOptions): MutateFn<T>;
  /**
   * A level-triggered reconcile (docs/reconcile.md): called with the object as it is now whenever
   * it, anything it `owns` or `watches`, or a requeue it asked for says it may need work; reads
   * its world from `ctx.cache`. At most one per resource, and not beside create/update/delete/
   * resume/field handlers of the same resource.
   */
  reconcile<T extends object = KubeObject, W extends readonly ReconcileTarget<any>[] = ReconcileTarget<any>[]>(
    resource: Target<T>, fn: ReconcileFn<T>, options?: ReconcileOptions<T, W>,
  ): ReconcileFn<T>;
  /** One long-running fn per matching object; its `signal` aborts on deletion, unmatching, freeze, shutdown. */
  daemon<T extends object = KubeObject>(resource: Target<T>, fn: DaemonFn<T>, options?: DaemonOptions<T>): DaemonFn<T>;
  /**
   * A fn called every `interval` seconds per matching object (or, with `idle` alone, once per quiet spell);
   * results, errors and retries as a handler's.
   */
  timer<T extends object = KubeObject>(resource: Target<T>, fn: TimerFn<T>, options: TimerOptions<T>): TimerFn<T>;
  /**
   * An index kept from the resource's objects: `fn` returns { key: value } or nothing; handlers read
   * `ctx.indexes.<id>`.
   */
  index<T extends object = KubeObject>(resource: Target<T>, fn: IndexFn<T>, options?: IndexOptions<T>): IndexFn<T>;
  /** Runs once before any watch; a failure stops the operator (exit code 6). */
  startup(fn: ActivityFn, options?: ActivityOptions): ActivityFn;
  /** Runs once at shutdown, after the watchers and handlers stopped, within a grace period of its own. */
  cleanup(fn: ActivityFn, options?: ActivityOptions): ActivityFn;
  /** A named value in the /healthz report (`probes.<id>`), reused for `cacheFor` seconds. */
  probe(fn: ActivityFn, options?: ActivityOptions): ActivityFn;
  /** Credentials instead of the kubeconfig's: asked before anything connects, and again after a 401. */
  login(fn: LoginFn, options?: ActivityOptions): LoginFn;
  /** The conversion webhook of a CRD ("plural.group"): a function, or { "v1->v2": fn, ... }. */
  convert(resource: Target<object>, convert: ConvertFn | ConversionTable): void;
}
