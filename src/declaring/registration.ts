// What goes wrong while handler modules register, said as kobun says a bad configuration: one
// line naming the registration and the fix, exit code 3 (README "Exit codes"), never a stack
// trace. Every `on.*` call turns what it throws into a RegistrationError; a compiled operator
// imports its handler modules before its CLI runs, so cli/operator/loading.ts reports one thrown then.
// And what every kind of handler (kinds/) shares when it registers: the parsed selector, matching
// it to a resolved resource, the `field` filter's check, distinct selectors, the options' names.

import { parseSelector, type ResourceSelector } from "../kube/index.ts";
import type { Resource } from "../kube/index.ts";
import { closestMatch } from "../util/index.ts";
import { fieldPath } from "./filters.ts";

/** A registration (`on.*`) that cannot work as written: the message names it and says what to do. */
export class RegistrationError extends Error {
  override readonly name = "RegistrationError";
}

/** `on` with every function turning what it throws into a RegistrationError (the message kept). */
export function registering<T extends object>(on: T): T {
  const wrapped: Record<string, unknown> = {};
  for (const [name, register] of Object.entries(on)) {
    wrapped[name] = (...args: unknown[]) => {
      try {
        return (register as (...a: unknown[]) => unknown)(...args);
      } catch (error) {
        if (error instanceof RegistrationError || !(error instanceof Error)) throw error;
        throw new RegistrationError(error.message, { cause: error });
      }
    };
  }
  return wrapped as T;
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

/**
 * An update or field handler's field, if a change can touch it. The essence it is diffed in holds no status and, of
 * metadata, only labels and annotations; Kopf adds such a handler's field to its essence (`field='status'` reacts
 * to a Job's status), kobun does not, so the handler would never run: refused, saying what sees such a field.
 */
export function changeableField(kind: string, id: string, path: string[]): string[] {
  if (kind !== "update" && kind !== "field") return path;
  const [top, second] = path;
  const kept = second === undefined || second === "labels" || second === "annotations";
  if (top !== "status" && (top !== "metadata" || kept)) return path;
  throw new Error(
    `${kind} handler ${id}: field "${path.join(".")}" is never part of a change kobun compares (status, and metadata ` +
      "but labels and annotations, are left out, where Kopf adds a handler's field), so the handler would never " +
      "run: read it with on.event (every event), on.daemon or on.timer (with this field filter), or on.reconcile",
  );
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

/** The resource an `on.*` was given, as written ("widgets.example.com/v1"); a token as the selector it stands for. */
export function selectorName(selector: ResourceSelector): string {
  if (typeof selector === "string") return selector;
  const { plural, group, version } = selector;
  if (group) return version ? `${plural}.${group}/${version}` : `${plural}.${group}`;
  return version ? `${version}/${plural}` : plural;
}

/** How a message shows that resource: quoted, so a token reads as its selector, not as its JSON. */
export function shownSelector(selector: ResourceSelector): string {
  return JSON.stringify(selectorName(selector));
}

/**
 * Refuses an option `where` does not have (a typo in JavaScript, or an option of another kind of handler, is never
 * silently ignored: Kopf's decorators refuse unknown arguments too), naming the closest known one.
 */
export function checkOptionNames(where: string, options: unknown, known: readonly string[]): void {
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new RegistrationError(`${where}: the options are an object like { id: "..." }, not ${String(options)}`);
  }
  for (const name of Object.keys(options)) {
    if (known.includes(name)) continue;
    const near = closestMatch(name, known);
    const hint = near ? `; did you mean ${JSON.stringify(near)}?` : "";
    const all = known.join(", ");
    throw new RegistrationError(`${where}: no option ${JSON.stringify(name)}${hint} (its options: ${all})`);
  }
}

/**
 * `names`, checked by the compiler to be every key of T and nothing else: the list checkOptionNames takes for an
 * options type stays the type's own as options are added.
 */
export function everyKeyOf<T>() {
  return <const N extends readonly (keyof T & string)[]>(
    names: N & ([Exclude<keyof T, N[number]>] extends [never] ? unknown : { missing: Exclude<keyof T, N[number]> }),
  ): readonly string[] => names;
}
