// Filters that decide whether a handler applies to an object: label and annotation matchers,
// field value matchers, and `when` callbacks. Pure functions of the object and of the context a
// caller hands in (lazily: most filters read none); no I/O, no state. The engines (handling/,
// daemons, indexes, admission/) share `filtersPass`, so a filter means the same everywhere.

/** Matches when the label/annotation/field exists, whatever its value. */
export const PRESENT: unique symbol = Symbol.for("kobun.PRESENT");
/** Matches when the label/annotation/field does not exist. */
export const ABSENT: unique symbol = Symbol.for("kobun.ABSENT");

/**
 * A label's or annotation's matcher: a value to equal, PRESENT, ABSENT, or a predicate of the value
 * (undefined when absent) and of the handler's context (Kopf passes the value positionally and the
 * context as keyword arguments; a predicate of the value alone is one that ignores its second argument).
 */
export type MetaMatcher<C = any> =
  | string | number | boolean | null | typeof PRESENT | typeof ABSENT | ((value: any, ctx: C) => boolean);

/**
 * What a field filter (`value`, `old`, `new`) takes: a label's matchers, or a list or an object,
 * compared by value (Kopf's `value=` takes any value).
 */
export type ValueMatcher<C = any> = MetaMatcher<C> | readonly unknown[] | { readonly [key: string]: unknown };

export type MetaMatchers<C = any> = Record<string, MetaMatcher<C>>;

/** What every object filter is made of (each handler kind's options have these). */
export interface ObjectFilters<C = any> {
  labels?: MetaMatchers<C>;
  annotations?: MetaMatchers<C>;
  /** Matches the value at `field`; with no `value`, the field must be present. */
  value?: ValueMatcher<C>;
  when?: (ctx: C) => boolean;
}

/**
 * The context of a callback, made on first need (a filter of values only never makes one). A caller that
 * has none passes none: a predicate then gets `undefined` as its second argument.
 */
export type ContextOf<C> = () => C;

const NO_CONTEXT = (): any => undefined;

export function matchValue<C>(
  matcher: ValueMatcher<C> | undefined, value: unknown, contextOf: ContextOf<C> = NO_CONTEXT,
): boolean {
  if (matcher === undefined) return true;
  if (matcher === PRESENT) return value !== undefined;
  if (matcher === ABSENT) return value === undefined;
  if (typeof matcher === "function") return Boolean(matcher(value, contextOf()));
  return value !== undefined && deepEqual(matcher, value);
}

/**
 * Whether any of `values` matches (Kopf's field filter on an update: the old or the new value);
 * with no matcher, whether any is present.
 */
export function matchAny<C>(
  matcher: ValueMatcher<C> | undefined, values: readonly unknown[], contextOf: ContextOf<C> = NO_CONTEXT,
): boolean {
  const wanted = matcher ?? PRESENT;
  for (const value of values) if (matchValue(wanted, value, contextOf)) return true;
  return false;
}

export function matchMeta<C>(
  matchers: MetaMatchers<C> | undefined, values: Record<string, string> | undefined,
  contextOf: ContextOf<C> = NO_CONTEXT,
): boolean {
  if (!matchers) return true;
  for (const key in matchers) {
    if (!matchValue(matchers[key], values?.[key], contextOf)) return false;
  }
  return true;
}

/**
 * Every filter of `filters` on an object, in Kopf's order: labels, annotations, the field (when
 * `field` is given: true when the value at the field passes), `when` last. `contextOf` is asked
 * only by a callback, and should make the context once.
 */
export function filtersPass<C>(
  filters: ObjectFilters<C>, metadata: { labels?: Record<string, string>; annotations?: Record<string, string> },
  field: ((contextOf: ContextOf<C>) => boolean) | undefined, contextOf: ContextOf<C>,
): boolean {
  const { labels, annotations, when } = filters;
  if (labels && !matchMeta(labels, metadata.labels, contextOf)) return false;
  if (annotations && !matchMeta(annotations, metadata.annotations, contextOf)) return false;
  if (field && !field(contextOf)) return false;
  return !when || Boolean(when(contextOf()));
}

/** A dotted path ("spec.size", or ["spec", "a.b"]) as a list of keys. */
export function fieldPath(field: string | readonly string[]): string[] {
  return typeof field === "string" ? field.split(".").filter(Boolean) : [...field];
}

export function getField(value: unknown, path: readonly string[]): unknown {
  let current: any = value;
  for (const key of path) {
    if (current === null || typeof current !== "object") return undefined;
    current = current[key];
  }
  return current;
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    if (a.length !== bb.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], bb[i])) return false;
    return true;
  }
  // Plain loops, no key arrays: it runs on every cycle and every echo (keys set to undefined count as absent).
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let defined = 0;
  for (const key in x) {
    if (!Object.hasOwn(x, key) || x[key] === undefined) continue;
    if (!Object.hasOwn(y, key) || !deepEqual(x[key], y[key])) return false;
    defined++;
  }
  for (const key in y) if (Object.hasOwn(y, key) && y[key] !== undefined) defined--;
  return defined === 0;
}
