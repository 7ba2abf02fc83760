// The registry of handlers: the storage every kind's `on.*` functions (kinds/) record into, and
// what the runtime asks of it (selectors to watch, the specs of a resource).
// `registry` is the global one `import { on } from "kobun"` fills; `new Registry()`, one's own.
// Must never do I/O: resources are matched by their selector text; the runtime resolves them.

import type { KubeObject, Resource, ResourceSelector } from "../kube/index.ts";
import type { On } from "./on.ts";
import { Reconciles } from "./reconciles.ts";
import { childSelectors, definedCRDs, readOnlySelectors, watchedSelectors, type Registrations } from "./derived.ts";
import { Aliases } from "./aliases.ts";
import { registering, selectorMatches, type Wanted } from "./registration.ts";
import { activitiesOn, type ActivitySpec } from "./kinds/activities.ts";
import { backgroundOn, type BackgroundSpec } from "./kinds/background.ts";
import { handlersOn, type HandlerSpec } from "./kinds/handlers.ts";
import { indexOn, type IndexSpec } from "./kinds/indexing.ts";
import { reconcileOn } from "./kinds/reconcile.ts";
import { webhooksOn, type ConversionSpec, type WebhookSpec } from "./kinds/webhooks.ts";

export type { ActivitySpec } from "./kinds/activities.ts";
export type { BackgroundSpec } from "./kinds/background.ts";
export type { HandlerSpec } from "./kinds/handlers.ts";
export type { IndexSpec } from "./kinds/indexing.ts";
export type { ConversionSpec, WebhookSpec } from "./kinds/webhooks.ts";

/**
 * Handlers, webhooks, daemons, timers, indexes and activities registered with its `on.*`; `run({ registry })` runs
 * them. The global one is `registry`.
 */
export class Registry {
  readonly handlers: HandlerSpec[] = [];
  readonly webhooks: WebhookSpec[] = [];
  readonly conversions: ConversionSpec[] = [];
  readonly background: BackgroundSpec[] = [];
  readonly indexes: IndexSpec[] = [];
  readonly activities: ActivitySpec[] = [];
  /** The `on.reconcile` registrations (at most one per resource). */
  readonly reconciles = new Reconciles();
  readonly on: On;
  /** The aliases kobun.yaml's resources: keys may use (`resource(selector, { alias })`). */
  readonly aliases = new Aliases();
  private readonly counters = new Map<string, number>();
  private readonly parsed = new Map<HandlerSpec, Wanted>();

  constructor() {
    // Each kind of handler brings its `on.*` functions (kinds/), recording into this registry's storage.
    this.on = registering({
      ...handlersOn({ handlers: this.handlers, parsed: this.parsed, counters: this.counters, aliases: this.aliases }),
      ...webhooksOn(this),
      ...activitiesOn(this),
      ...indexOn(this),
      ...reconcileOn(this),
      ...backgroundOn(this),
    } as On); // typed tokens are object selectors: the typing is the signatures' alone
  }

  /** The distinct resource selectors handlers were registered for (the runtime resolves and watches them). */
  selectors(): ResourceSelector[] {
    return watchedSelectors(this.parts());
  }

  /** The resources watched only to be read: for an index, or a reconcile's `watches` (`kobun manifests`' RBAC). */
  watchedOnly(): ResourceSelector[] {
    return readOnlySelectors(this.parts());
  }

  /** The CRDs of the resources defined with defineResource that anything was registered for. */
  definitions(): KubeObject[] {
    return definedCRDs(this.parts());
  }

  /** The distinct resources handlers declared as their `children`, and reconciles own (`kobun manifests`' RBAC). */
  children(): ResourceSelector[] {
    return childSelectors(this.parts());
  }

  /** The handlers that apply to a resolved resource, in registration order. */
  forResource(resource: Resource): HandlerSpec[] {
    return this.handlers.filter((spec) => selectorMatches(this.parsed.get(spec)!, resource));
  }

  /** The daemons and timers that apply to a resolved resource, in registration order. */
  backgroundFor(resource: Resource): BackgroundSpec[] {
    return this.background.filter((spec) => selectorMatches(spec.wanted, resource));
  }

  /** Removes every handler (for tests that reuse a registry). */
  clear(): void {
    this.handlers.length = 0;
    this.background.length = 0;
    this.indexes.length = 0;
    this.activities.length = 0;
    this.webhooks.length = 0;
    this.conversions.length = 0;
    this.reconciles.clear();
    this.parsed.clear();
    this.aliases.clear();
    this.counters.clear();
  }

  private parts(): Registrations {
    const { handlers, background, indexes, webhooks, reconciles } = this;
    return { handlers, background, indexes, webhooks, reconciles };
  }
}
export { selectorMatches };

/** The global registry that `on.*` from "kobun" fills. */
export const registry = new Registry();
/** `on.create(...)`, `on.update(...)`, ... registering into the global registry. */
export const on: On = registry.on;
