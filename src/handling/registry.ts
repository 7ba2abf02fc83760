// The registry of handlers and the `on.*` decorators-as-functions that fill it.
// `registry` is the default global one that `import { on } from "kobun"` registers into;
// `new Registry()` gives tests and embedders their own.
// Must never do I/O: resources are matched by their selector text; the runtime resolves them.

import { parseSelector, type ResourceSelector } from "../kube/discovery.ts";
import type { Resource } from "../kube/types.ts";
import { fieldPath } from "./filters.ts";
import type {
  DeleteOptions,
  EventHandlerFn,
  EventOptions,
  FieldOptions,
  HandlerFn,
  HandlerKind,
  HandlerOptions,
} from "./types.ts";

export interface HandlerSpec {
  id: string;
  kind: HandlerKind;
  selector: ResourceSelector;
  fn: HandlerFn | EventHandlerFn;
  options: HandlerOptions & Partial<DeleteOptions> & Partial<FieldOptions>;
  /** For field handlers: the field as a path. */
  field?: string[];
  /** `options.sensitive` as paths. */
  sensitive?: string[][];
  /** Registration order, for running handlers in the order they were written. */
  order: number;
}

type Wanted = ReturnType<typeof parseSelector>;

type Register<O> = (selector: ResourceSelector, fn: HandlerFn, options?: O) => HandlerFn;

export interface On {
  create: Register<HandlerOptions>;
  update: Register<HandlerOptions>;
  /** Adds the finalizer `kobun.dev/finalizer` unless `{ optional: true }`. */
  delete: Register<DeleteOptions>;
  /** Runs on the first sight of an already-handled object after the operator starts. */
  resume: Register<HandlerOptions>;
  /** Runs when `options.field` changes (on creation too, when the field is set). */
  field(selector: ResourceSelector, options: FieldOptions, fn: HandlerFn): HandlerFn;
  /** Every watch event of the object: no progress, no retries, errors are logged. */
  event(selector: ResourceSelector, fn: EventHandlerFn, options?: EventOptions): EventHandlerFn;
}

export class Registry {
  readonly handlers: HandlerSpec[] = [];
  readonly on: On;
  private readonly counters = new Map<string, number>();
  private readonly parsed = new Map<HandlerSpec, Wanted>();

  constructor() {
    const changing = (kind: HandlerKind) => (selector: ResourceSelector, fn: HandlerFn, options: HandlerOptions = {}) => {
      this.add(kind, selector, fn, options);
      return fn;
    };
    this.on = {
      create: changing("create"),
      update: changing("update"),
      delete: changing("delete"),
      resume: changing("resume"),
      field: (selector, options, fn) => {
        if (typeof options === "function") [options, fn] = [fn as unknown as FieldOptions, options as HandlerFn];
        if (!options?.field) throw new Error("on.field needs { field: \"spec.something\" }");
        this.add("field", selector, fn, options);
        return fn;
      },
      event: (selector, fn, options = {}) => {
        this.add("event", selector, fn as never, options as HandlerOptions);
        return fn;
      },
    };
  }

  /** The distinct resource selectors handlers were registered for (the runtime resolves and watches them). */
  selectors(): ResourceSelector[] {
    const seen = new Map<string, ResourceSelector>();
    for (const spec of this.handlers) seen.set(this.parsed.get(spec)!.text, spec.selector);
    return [...seen.values()];
  }

  /** The handlers that apply to a resolved resource, in registration order. */
  forResource(resource: Resource): HandlerSpec[] {
    return this.handlers.filter((spec) => matches(this.parsed.get(spec)!, resource));
  }

  /** Removes every handler (for tests that reuse a registry). */
  clear(): void {
    this.handlers.length = 0;
    this.parsed.clear();
    this.counters.clear();
  }

  private add(kind: HandlerKind, selector: ResourceSelector, fn: HandlerFn | EventHandlerFn, options: HandlerSpec["options"]): void {
    if (typeof fn !== "function") throw new Error(`on.${kind}(${JSON.stringify(selector)}, ...) needs a handler function`);
    const wanted = parseSelector(selector);
    const n = (this.counters.get(`${kind}/${wanted.text}`) ?? 0) + 1;
    this.counters.set(`${kind}/${wanted.text}`, n);
    const id = options.id ?? (fn.name && fn.name !== "anonymous" ? fn.name : `${kind}/${wanted.text}#${n}`);
    for (const other of this.handlers) {
      if (other.id === id && other.kind === kind && this.parsed.get(other)!.text === wanted.text) {
        throw new Error(`a ${kind} handler with id ${JSON.stringify(id)} is already registered for ${wanted.text}: pass a distinct { id }`);
      }
    }
    if (options.retries !== undefined && !(options.retries >= 1)) throw new Error(`handler ${id}: retries must be ≥ 1 (attempts)`);
    for (const key of ["backoff", "timeout"] as const) {
      const v = options[key];
      if (v !== undefined && !(v >= 0)) throw new Error(`handler ${id}: ${key} must be a number of seconds ≥ 0`);
    }
    const spec: HandlerSpec = { id, kind, selector, fn, options, order: this.handlers.length };
    if (kind === "field") spec.field = fieldPath(options.field!);
    if (options.sensitive !== undefined) spec.sensitive = sensitivePaths(id, options.sensitive);
    this.handlers.push(spec);
    this.parsed.set(spec, wanted);
  }
}

function sensitivePaths(id: string, fields: unknown): string[][] {
  const ok = Array.isArray(fields) && fields.every((f) => typeof f === "string" && f.length > 0 && !f.split(".").includes(""));
  if (!ok) throw new Error(`handler ${id}: sensitive must be a list of field paths like ["spec.password"]`);
  return (fields as string[]).map((f) => fieldPath(f));
}

function matches(wanted: Wanted, resource: Resource): boolean {
  if (wanted.group !== undefined && wanted.group !== resource.group) return false;
  if (wanted.version !== undefined && wanted.version !== resource.version) return false;
  return wanted.name === resource.plural || wanted.name === resource.kind.toLowerCase() || wanted.name === resource.kind;
}

/** The global registry that `on.*` from "kobun" fills. */
export const registry = new Registry();
/** `on.create(...)`, `on.update(...)`, ... registering into the global registry. */
export const on: On = registry.on;
