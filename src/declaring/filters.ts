// Filters that decide whether a handler applies to an object: label and annotation matchers,
// field value matchers, and `when` callbacks. Pure functions of the object; no I/O, no state.

/** Matches when the label/annotation/field exists, whatever its value. */
export const PRESENT: unique symbol = Symbol.for("kobun.PRESENT");
/** Matches when the label/annotation/field does not exist. */
export const ABSENT: unique symbol = Symbol.for("kobun.ABSENT");

/** A value to equal, PRESENT, ABSENT, or a predicate of the value (undefined when absent). */
export type ValueMatcher =
  | string | number | boolean | null | typeof PRESENT | typeof ABSENT | ((value: any) => boolean);

export type MetaMatchers = Record<string, ValueMatcher>;

export function matchValue(matcher: ValueMatcher | undefined, value: unknown): boolean {
  if (matcher === undefined) return true;
  if (matcher === PRESENT) return value !== undefined;
  if (matcher === ABSENT) return value === undefined;
  if (typeof matcher === "function") return Boolean(matcher(value));
  return value !== undefined && deepEqual(matcher, value);
}

export function matchMeta(matchers: MetaMatchers | undefined, values: Record<string, string> | undefined): boolean {
  if (!matchers) return true;
  for (const key in matchers) {
    if (!matchValue(matchers[key], values?.[key])) return false;
  }
  return true;
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
