// The registry of handlers and the `on.*` decorators-as-functions that fill it.
// `registry` is the global one `import { on } from "kobun"` fills; `new Registry()`, one's own.
// Must never do I/O: resources are matched by their selector text; the runtime resolves them.

import { parseSelector, type ResourceSelector } from "../kube/index.ts";
import type { KubeObject, Resource } from "../kube/index.ts";
import type {
  DaemonFn, DaemonOptions, EventHandlerFn, EventOptions, FieldOptions, HandlerFn, HandlerKind, HandlerOptions,
  ActivityFn, ActivityOptions, LoginFn, IndexFn, IndexOptions, TimerFn, TimerOptions,
} from "./types.ts";
import type { On } from "./on.ts";
import type { ReconcileFn, ReconcileOptions } from "./reconcile.ts";
import { Reconciles } from "./reconciles.ts";
import { childSelectors, definedCRDs, readOnlySelectors, watchedSelectors, type Registrations } from "./derived.ts";
import { Aliases } from "./aliases.ts";
import { registering, RegistrationError, webhookIdOf, WEBHOOK_ID } from "./registration.ts";
import type { AdmissionOptions, ConversionTable, ConvertFn, MutateFn, ValidateFn } from "./webhooks.ts";
import {
  checkActivityOptions, checkAdmissionOptions, checkBackgroundOptions, checkHandlerOptions, filterField,
  selectorMatches, sensitivePaths, type ActivitySpec, type BackgroundSpec, type HandlerSpec, type IndexSpec,
  type WebhookSpec, type ConversionSpec, type Wanted,
} from "./specs.ts";

export type { ActivitySpec, BackgroundSpec, ConversionSpec, HandlerSpec, IndexSpec, WebhookSpec } from "./specs.ts";

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
    const changing =
      (kind: HandlerKind) => (selector: ResourceSelector, fn: HandlerFn, options: HandlerOptions = {}) => {
        this.add(kind, selector, fn, options);
        return fn;
      };
    this.on = registering({
      create: changing("create"),
      update: changing("update"),
      delete: changing("delete"),
      resume: changing("resume"),
      field: (selector: ResourceSelector, options: FieldOptions, fn: HandlerFn) => {
        if (typeof options === "function") [options, fn] = [fn as unknown as FieldOptions, options as HandlerFn];
        if (!options?.field) throw new Error("on.field needs { field: \"spec.something\" }");
        this.add("field", selector, fn, options);
        return fn;
      },
      event: (selector: ResourceSelector, fn: EventHandlerFn, options: EventOptions = {}) => {
        this.add("event", selector, fn as never, options as HandlerOptions);
        return fn;
      },
      validate: (selector: ResourceSelector, fn: ValidateFn, options: AdmissionOptions = {}) => {
        this.addWebhook("validate", selector, fn, options);
        return fn;
      },
      mutate: (selector: ResourceSelector, fn: MutateFn, options: AdmissionOptions = {}) => {
        this.addWebhook("mutate", selector, fn, options);
        return fn;
      },
      convert: (selector: ResourceSelector, convert: ConvertFn | ConversionTable) =>
        this.addConversion(selector, convert),
      startup: (fn: ActivityFn, options: ActivityOptions = {}) => this.addActivity("startup", fn, options),
      cleanup: (fn: ActivityFn, options: ActivityOptions = {}) => this.addActivity("cleanup", fn, options),
      probe: (fn: ActivityFn, options: ActivityOptions = {}) => this.addActivity("probe", fn, options),
      login: (fn: LoginFn, options: ActivityOptions = {}) => this.addActivity("login", fn, options),
      index: (selector: ResourceSelector, fn: IndexFn, options: IndexOptions = {}) => {
        this.addIndex(selector, fn, options);
        return fn;
      },
      reconcile: (selector: ResourceSelector, fn: ReconcileFn, options: ReconcileOptions = {}) => {
        this.reconciles.add(selector, fn, options);
        this.aliases.note(selector);
        return fn;
      },
      daemon: (selector: ResourceSelector, fn: DaemonFn, options: DaemonOptions = {}) => {
        this.addBackground("daemon", selector, fn, options);
        return fn;
      },
      timer: (selector: ResourceSelector, fn: TimerFn, options: TimerOptions) => {
        if (typeof options === "function") [options, fn] = [fn as unknown as TimerOptions, options as TimerFn];
        this.addBackground("timer", selector, fn, options);
        return fn;
      },
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

  private addWebhook(
    kind: WebhookSpec["kind"], selector: ResourceSelector, fn: ValidateFn | MutateFn, options: AdmissionOptions,
  ): void {
    if (typeof fn !== "function") {
      throw new Error(`on.${kind}(${JSON.stringify(selector)}, ...) needs a handler function`);
    }
    const wanted = parseSelector(selector);
    const n = this.webhooks.filter((w) => w.kind === kind).length + 1;
    const id = options.id ?? (fn.name && fn.name !== "anonymous" ? webhookIdOf(fn.name) : undefined) ?? `${kind}-${n}`;
    // The id names the webhook (a label of its DNS name) and its URL path.
    if (!WEBHOOK_ID.test(id)) {
      const fix = JSON.stringify(webhookIdOf(id) ?? `${kind}-${n}`);
      throw new Error(
        `on.${kind} handler ${JSON.stringify(id)}: the id must be lowercase letters, digits and "-", at most 63 ` +
          `(it names the webhook): pass { id: ${fix} }`,
      );
    }
    if (this.webhooks.some((w) => w.id === id)) {
      throw new Error(`a webhook with id ${JSON.stringify(id)} is already registered: pass a distinct { id }`);
    }
    checkAdmissionOptions(`on.${kind} handler ${id}`, options);
    this.webhooks.push({ id, kind, selector, wanted, fn, options });
  }

  private addConversion(selector: ResourceSelector, convert: ConvertFn | ConversionTable): void {
    const wanted = parseSelector(selector);
    if (!wanted.group) {
      throw new Error(
        `on.convert(${JSON.stringify(selector)}): name the CRD's resource with its group, ` +
          `like "kobunexamples.kobun.dev"`,
      );
    }
    const isTable = typeof convert === "object" && convert !== null
      && Object.keys(convert).every((k) => /^[^->]+->[^->]+$/.test(k));
    if (typeof convert !== "function" && !isTable) {
      throw new Error(
        `on.convert(${JSON.stringify(selector)}): pass a function, or a table like { "v1->v2": fn, "v2->v1": fn }`,
      );
    }
    if (this.conversions.some((c) => c.wanted.group === wanted.group && c.wanted.name === wanted.name)) {
      throw new Error(`on.convert: ${wanted.name}.${wanted.group} already has a conversion`);
    }
    this.conversions.push({ selector, wanted, convert });
  }

  private addActivity<F extends ActivityFn | LoginFn>(kind: ActivitySpec["kind"], fn: F, options: ActivityOptions): F {
    if (typeof fn !== "function") throw new Error(`on.${kind}(...) needs a function`);
    const n = this.activities.filter((a) => a.kind === kind).length + 1;
    const id = options.id ?? (fn.name && fn.name !== "anonymous" ? fn.name : `${kind}#${n}`);
    checkActivityOptions(kind, id, options, this.activities);
    this.activities.push({ id, kind, fn, options } as ActivitySpec);
    return fn;
  }

  private addIndex(selector: ResourceSelector, fn: IndexFn, options: IndexOptions): void {
    if (typeof fn !== "function") throw new Error(`on.index(${JSON.stringify(selector)}, ...) needs a function`);
    const wanted = parseSelector(selector);
    const id = options.id ?? (fn.name && fn.name !== "anonymous" ? fn.name : undefined);
    if (!id) {
      throw new Error(
        `on.index(${JSON.stringify(selector)}, ...): name the index (a named function, or { id }): ` +
          "handlers read it as ctx.indexes.<id>",
      );
    }
    if (this.indexes.some((i) => i.id === id)) {
      throw new Error(`an index with id ${JSON.stringify(id)} is already registered: pass a distinct { id }`);
    }
    const field = filterField(`index ${id}`, options);
    this.aliases.note(selector);
    this.indexes.push({ id, selector, wanted, fn, options, ...(field ? { field } : {}) });
  }

  private addBackground(
    kind: BackgroundSpec["kind"], selector: ResourceSelector, fn: DaemonFn | TimerFn,
    options: BackgroundSpec["options"],
  ): void {
    if (typeof fn !== "function") throw new Error(`on.${kind}(${JSON.stringify(selector)}, ...) needs a function`);
    const wanted = parseSelector(selector);
    const n = this.background.filter((b) => b.kind === kind && b.wanted.text === wanted.text).length + 1;
    const id = options?.id ?? (fn.name && fn.name !== "anonymous" ? fn.name : `${kind}/${wanted.text}#${n}`);
    if (this.background.some((b) => b.id === id && b.wanted.text === wanted.text)) {
      throw new Error(
        `a daemon or timer with id ${JSON.stringify(id)} is already registered for ${wanted.text}: ` +
          "pass a distinct { id }",
      );
    }
    checkBackgroundOptions(`${kind} ${id}`, kind, options);
    const field = filterField(`${kind} ${id}`, options ?? {});
    this.aliases.note(selector);
    this.background.push({ id, kind, selector, wanted, fn, options: options ?? {}, ...(field ? { field } : {}) });
  }

  private add(
    kind: HandlerKind, selector: ResourceSelector, fn: HandlerFn | EventHandlerFn, options: HandlerSpec["options"],
  ): void {
    if (typeof fn !== "function") {
      throw new Error(`on.${kind}(${JSON.stringify(selector)}, ...) needs a handler function`);
    }
    const wanted = parseSelector(selector);
    const n = (this.counters.get(`${kind}/${wanted.text}`) ?? 0) + 1;
    this.counters.set(`${kind}/${wanted.text}`, n);
    if (typeof options.id === "string" && options.id.includes("/")) {
      // A sub-handler's id is `<parent id>/<its id>`: a handler id with "/" could be one of them.
      throw new RegistrationError(
        `on.${kind} handler ${JSON.stringify(options.id)}: the id must not contain "/" (sub-handler ids are ` +
          "<parent>/<child>)",
      );
    }
    const id = options.id ?? (fn.name && fn.name !== "anonymous" ? fn.name : `${kind}/${wanted.text}#${n}`);
    for (const other of this.handlers) {
      if (other.id === id && other.kind === kind && this.parsed.get(other)!.text === wanted.text) {
        throw new Error(
          `a ${kind} handler with id ${JSON.stringify(id)} is already registered for ${wanted.text}: ` +
            "pass a distinct { id }",
        );
      }
    }
    checkHandlerOptions(id, options);
    const spec: HandlerSpec = { id, kind, selector, fn, options, order: this.handlers.length };
    const field = filterField(`${kind} handler ${id}`, options);
    if (field) spec.field = field;
    if (options.sensitive !== undefined) spec.sensitive = sensitivePaths(id, options.sensitive);
    this.handlers.push(spec);
    this.aliases.note(selector);
    this.parsed.set(spec, wanted);
  }
}
export { selectorMatches };

/** The global registry that `on.*` from "kobun" fills. */
export const registry = new Registry();
/** `on.create(...)`, `on.update(...)`, ... registering into the global registry. */
export const on: On = registry.on;
