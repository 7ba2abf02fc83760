// What a registration is: the specs the registry keeps for each kind of handler, and the checks
// of the options that only the registry's callers can get wrong. Split from registry.ts, which
// holds the `on.*` functions that build them.

import { parseSelector, type ResourceSelector } from "../kube/index.ts";
import type { Resource } from "../kube/index.ts";
import { fieldPath } from "./filters.ts";
import type {
  ActivityFn, ActivityOptions, LoginFn, DaemonFn, DaemonOptions, DeleteOptions, EventHandlerFn, FieldOptions,
  HandlerFn, HandlerKind, HandlerOptions, IndexFn, IndexOptions, TimerFn, TimerOptions, UpdateOptions,
} from "./types.ts";
import type {
  AdmissionOperation, AdmissionOptions, ConversionTable, ConvertFn, MutateFn, ValidateFn,
} from "./webhooks.ts";

export interface HandlerSpec {
  id: string;
  kind: HandlerKind;
  selector: ResourceSelector;
  fn: HandlerFn | EventHandlerFn;
  options: Omit<HandlerOptions, "field"> & Partial<DeleteOptions> & Partial<FieldOptions> & Partial<UpdateOptions>;
  /** The `field` option as a path (on.field's, or any handler's field filter). */
  field?: string[];
  /** `options.sensitive` as paths. */
  sensitive?: string[][];
  /** Registration order, for running handlers in the order they were written. */
  order: number;
}

export type Wanted = ReturnType<typeof parseSelector>;

type Named = Pick<Resource, "group" | "version" | "plural" | "kind" | "singular" | "shortNames">;

/**
 * Whether a selector names this resource (group, version when given, and any name discovery resolves: plural,
 * singular, kind, short name).
 */
export function selectorMatches(wanted: Wanted, resource: Named): boolean {
  if (wanted.group !== undefined && wanted.group !== resource.group) return false;
  if (wanted.version !== undefined && wanted.version !== resource.version) return false;
  const { name } = wanted;
  if (name === resource.plural || name === resource.kind) return true;
  // As discovery (and kubectl) resolve them: the other names in lower case.
  const lower = name.toLowerCase();
  return lower === resource.kind.toLowerCase() || lower === resource.singular
    || (resource.shortNames?.includes(lower) ?? false);
}

/** A daemon or a timer: run by reconciling/ beside the handlers, one per matching object. */
export interface BackgroundSpec {
  id: string;
  kind: "daemon" | "timer";
  selector: ResourceSelector;
  wanted: Wanted;
  fn: DaemonFn | TimerFn;
  options: DaemonOptions & Partial<TimerOptions>;
  /** The `field` filter as a path. */
  field?: string[];
}

/** An in-memory index kept from a resource's watch stream (handling/indexes.ts). */
export interface IndexSpec {
  id: string;
  selector: ResourceSelector;
  wanted: Wanted;
  fn: IndexFn;
  options: IndexOptions;
  /** The `field` filter as a path. */
  field?: string[];
}

/**
 * An operator-wide activity: on.startup (before any watch), on.cleanup (after everything stopped), on.probe,
 * on.login.
 */
export type ActivitySpec =
  | { id: string; kind: "startup" | "cleanup" | "probe"; fn: ActivityFn; options: ActivityOptions }
  | { id: string; kind: "login"; fn: LoginFn; options: ActivityOptions };

/** A validating or mutating webhook: served by admission/, never watched. */
export interface WebhookSpec {
  id: string;
  kind: "validate" | "mutate";
  selector: ResourceSelector;
  wanted: Wanted;
  fn: ValidateFn | MutateFn;
  options: AdmissionOptions;
}

/** A CRD's conversion: one function for every direction, or a table of them. */
export interface ConversionSpec {
  selector: ResourceSelector;
  wanted: Wanted;
  convert: ConvertFn | ConversionTable;
}

export function checkActivityOptions(
  kind: ActivitySpec["kind"], id: string, options: ActivityOptions, registered: readonly ActivitySpec[],
): void {
  if (options.cacheFor !== undefined && !(typeof options.cacheFor === "number" && options.cacheFor >= 0)) {
    throw new Error(`${kind} ${id}: cacheFor must be a number of seconds ≥ 0`);
  }
  const retrying = (["retries", "backoff", "timeout", "errors"] as const).filter((key) => options[key] !== undefined);
  if (kind !== "startup" && retrying.length) {
    throw new Error(`${kind} ${id}: ${retrying.join(", ")}: only on.startup is retried (and takes them)`);
  }
  if (options.retries !== undefined && !(options.retries >= 1)) {
    throw new Error(`startup ${id}: retries must be ≥ 1 (attempts)`);
  }
  for (const key of ["backoff", "timeout"] as const) {
    const v = options[key];
    if (v !== undefined && !(v >= 0)) throw new Error(`startup ${id}: ${key} must be a number of seconds ≥ 0`);
  }
  if (kind === "probe" && registered.some((a) => a.kind === "probe" && a.id === id)) {
    throw new Error(`a probe with id ${JSON.stringify(id)} is already registered: pass a distinct { id }`);
  }
}

const OPERATIONS: readonly AdmissionOperation[] = ["CREATE", "UPDATE", "DELETE", "CONNECT"];

export function checkAdmissionOptions(where: string, options: AdmissionOptions): void {
  const { operations, failurePolicy, sideEffects, timeoutSeconds } = options;
  if (operations !== undefined
    && (!Array.isArray(operations) || operations.length === 0 || operations.some((o) => !OPERATIONS.includes(o)))) {
    throw new Error(`${where}: operations must be a non-empty list of ${OPERATIONS.join(", ")}`);
  }
  if (failurePolicy !== undefined && failurePolicy !== "Fail" && failurePolicy !== "Ignore") {
    throw new Error(`${where}: failurePolicy must be "Fail" or "Ignore"`);
  }
  if (sideEffects !== undefined && sideEffects !== "None" && sideEffects !== "NoneOnDryRun") {
    throw new Error(`${where}: sideEffects must be "None" or "NoneOnDryRun"`);
  }
  if (timeoutSeconds !== undefined
    && !(Number.isInteger(timeoutSeconds) && timeoutSeconds >= 1 && timeoutSeconds <= 30)) {
    throw new Error(`${where}: timeoutSeconds must be an integer from 1 to 30 (the API server's range)`);
  }
  for (const c of options.matchConditions ?? []) {
    if (typeof c?.name !== "string" || typeof c?.expression !== "string") {
      throw new Error(`${where}: each of matchConditions needs a name and a CEL expression`);
    }
  }
  const { subresources, field } = options;
  if (subresources !== undefined && (!Array.isArray(subresources)
    || subresources.some((s) => typeof s !== "string" || !/^(\*|[a-z][a-z0-9-]*)$/.test(s)))) {
    throw new Error(`${where}: subresources must be a list of subresource names like "status", or ["*"] for all`);
  }
  const path = typeof field === "string" ? field.split(".").filter(Boolean) : field;
  if (field !== undefined && (!Array.isArray(path) || path.length === 0 || path.some((k) => typeof k !== "string"))) {
    throw new Error(`${where}: field must be a dotted path like "spec.size" or a list of keys`);
  }
  if (options.value !== undefined && field === undefined) throw new Error(`${where}: value needs a field to match`);
}

export function sensitivePaths(id: string, fields: unknown): string[][] {
  const ok = Array.isArray(fields)
    && fields.every((f) => typeof f === "string" && f.length > 0 && !f.split(".").includes(""));
  if (!ok) throw new Error(`handler ${id}: sensitive must be a list of field paths like ["spec.password"]`);
  return (fields as string[]).map((f) => fieldPath(f));
}

/**
 * The `field` filter of a handler's options as a path (undefined without one), after checking it; `value`,
 * `old` and `new` match the value at the field, so they need one.
 */
export function filterField(where: string, options: { field?: unknown; value?: unknown; old?: unknown; new?: unknown }):
  string[] | undefined {
  const { field } = options;
  if (field === undefined) {
    for (const key of ["value", "old", "new"] as const) {
      if (options[key] === undefined) continue;
      throw new Error(`${where}: ${key} matches the value at a field: add { field: "spec.x" }`);
    }
    return undefined;
  }
  const path = typeof field === "string" ? fieldPath(field)
    : Array.isArray(field) && field.every((key) => typeof key === "string" && key !== "") ? [...field as string[]]
    : undefined;
  if (!path?.length) {
    throw new Error(`${where}: field must be a dotted path like "spec.size" or a list of keys like ["spec", "a.b"]`);
  }
  return path;
}

export function checkHandlerOptions(id: string, options: HandlerSpec["options"]): void {
  if (options.retries !== undefined && !(options.retries >= 1)) {
    throw new Error(`handler ${id}: retries must be ≥ 1 (attempts)`);
  }
  for (const key of ["backoff", "timeout"] as const) {
    const v = options[key];
    if (v !== undefined && !(v >= 0)) throw new Error(`handler ${id}: ${key} must be a number of seconds ≥ 0`);
  }
  if (options.children === undefined) return;
  if (!Array.isArray(options.children)) {
    throw new Error(`handler ${id}: children must be a list of resources like ["configmaps", "apps/v1/deployments"]`);
  }
  for (const child of options.children) {
    try {
      parseSelector(child);
    } catch (error) {
      throw new Error(`handler ${id}: children: ${(error as Error).message}`);
    }
  }
}

export function checkBackgroundOptions(
  where: string, kind: BackgroundSpec["kind"], options: BackgroundSpec["options"] | undefined,
): void {
  if (kind === "timer" && !(typeof options?.interval === "number" && options.interval > 0)) {
    throw new Error(`${where}: needs { interval } in seconds > 0`);
  }
  for (const key of ["initialDelay", "backoff", "cancellationTimeout", "cancellationBackoff", "idle"] as const) {
    const v = options?.[key];
    if (v !== undefined && !(typeof v === "number" && v >= 0)) {
      throw new Error(`${where}: ${key} must be a number of seconds ≥ 0`);
    }
  }
  if (options?.retries !== undefined && !(options.retries >= 1)) {
    throw new Error(`${where}: retries must be ≥ 1 (attempts)`);
  }
}

/**
 * Distinct by `key`, in the order each key first came; `spelling`: which selector of a key is kept
 * (a token registered later carries what a string does not: its alias, metadataOnly).
 */
export function distinctSelectors(
  selectors: readonly ResourceSelector[], key: (selector: ResourceSelector) => string, spelling: "first" | "last",
): ResourceSelector[] {
  const seen = new Map<string, ResourceSelector>();
  for (const selector of selectors) {
    if (spelling === "last" || !seen.has(key(selector))) seen.set(key(selector), selector);
  }
  return [...seen.values()];
}
