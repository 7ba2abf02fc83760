// The vocabulary of the settings schema: one builder per kind of value (integer, duration,
// enum, ...). A field knows its default, its documentation, how to read a raw YAML or flag
// value into a typed one (or say what it expected instead), and how to write a value back
// as YAML. The schema in schema.ts is a table built from these; nothing here knows a key.

import { DURATION_EXPECTED, durationSeconds, formatDuration } from "./duration.ts";

/** The outcome of reading one raw value: the typed value, or what was expected instead. */
export type ReadResult<T> = { readonly ok: true; readonly value: T } | {
  readonly ok: false;
  readonly expected: string;
  /** Where inside the value the problem is, e.g. "[2]" for a list entry, and what was found there. */
  readonly at?: { readonly suffix: string; readonly got: unknown };
};

export interface Field<T> {
  readonly kind: "field";
  readonly default: T;
  /** One line for the example file and for --help. */
  readonly doc: string;
  /** What a valid value looks like, for messages: "an integer from 1 to 10000". */
  readonly expected: string;
  readonly read: (raw: unknown) => ReadResult<T>;
  readonly toYaml: (value: T) => string;
}

export interface Section<F extends Record<string, Node>> {
  readonly kind: "section";
  readonly doc: string;
  readonly fields: F;
}

// `any` is confined to this constraint: it lets Section hold fields of every value type.
export type Node = Field<any> | Section<any>;

/** The typed value a schema node produces: a field's type, or an object of its fields' values. */
export type ValueOf<N> = N extends Field<infer T> ? T
  : N extends Section<infer F> ? { [K in keyof F]: ValueOf<F[K]> } : never;

/**
 * A part of a key (orNull's field, a list's entry) whose default would never be read: refused
 * when the schema is built, since a reader takes it for the key's default (handling.retries
 * once read as 1 while its default is null; issue 31).
 */
function unreadDefault(part: Pick<Field<unknown>, "default">, where: string): void {
  if (part.default === undefined) return;
  const written = JSON.stringify(part.default);
  throw new Error(
    `settings schema: ${where} has a default of its own (${written}) that is never read; ` +
      "write the key's default on the key",
  );
}

/** A string as a YAML scalar, quoted only when YAML needs it. */
// Loaded on first use: only the example renderer needs it, and start-up should not pay for `yaml`.
const yamlScalar = (value: string): string => (require("yaml") as typeof import("yaml")).stringify(value).trimEnd();

const ok = <T>(value: T): ReadResult<T> => ({ ok: true, value });
const no = (expected: string, at?: { suffix: string; got: unknown }): ReadResult<never> => ({
  ok: false, expected, at,
});

export function section<F extends Record<string, Node>>(doc: string, fields: F): Section<F> {
  return { kind: "section", doc, fields };
}

interface Common<T> {
  /**
   * The key's default: the one place a setting's default is written (test/contracts/defaults.test.ts).
   * A field that is only a part of a key (what orNull wraps, a list's entry) has none: its key's
   * default is the wrapper's (orNull's is null), and a default written there would never be read.
   */
  default?: T;
  doc: string;
}

/** The builder's default as the field's; parts without one never hand it out (see Common). */
const defaultOf = <T>(options: Common<T>): T => options.default as T;

function rangeText(min: number | undefined, max: number | undefined, show: (n: number) => string): string {
  if (min !== undefined && max !== undefined) return ` from ${show(min)} to ${show(max)}`;
  if (min !== undefined) return ` of at least ${show(min)}`;
  if (max !== undefined) return ` of at most ${show(max)}`;
  return "";
}

function inRange(value: number, min?: number, max?: number): boolean {
  return (min === undefined || value >= min) && (max === undefined || value <= max);
}

export function integer(options: Common<number> & { min?: number; max?: number }): Field<number> {
  const expected = `an integer${rangeText(options.min, options.max, String)}`;
  return {
    kind: "field", default: defaultOf(options), doc: options.doc, expected, toYaml: String,
    read: (raw) => {
      if (typeof raw !== "number" || !Number.isInteger(raw)) return no(expected);
      return inRange(raw, options.min, options.max) ? ok(raw) : no(expected);
    },
  };
}

export function decimal(options: Common<number> & { min?: number; max?: number }): Field<number> {
  const expected = `a number${rangeText(options.min, options.max, String)}`;
  return {
    kind: "field", default: defaultOf(options), doc: options.doc, expected, toYaml: String,
    read: (raw) => {
      if (typeof raw !== "number" || !Number.isFinite(raw)) return no(expected);
      return inRange(raw, options.min, options.max) ? ok(raw) : no(expected);
    },
  };
}

/** Seconds, written as "30s", "5m", "250ms" or a plain number. */
export function duration(options: Common<number> & { min?: number; max?: number }): Field<number> {
  const ranged = `a duration${rangeText(options.min, options.max, formatDuration)}`;
  const bounded = options.min !== undefined || options.max !== undefined;
  return {
    kind: "field", default: defaultOf(options), doc: options.doc, expected: bounded ? ranged : DURATION_EXPECTED,
    toYaml: (value) => formatDuration(value),
    read: (raw) => {
      const seconds = durationSeconds(raw);
      if (seconds === undefined) return no(DURATION_EXPECTED);
      return inRange(seconds, options.min, options.max) ? ok(seconds) : no(ranged);
    },
  };
}

export function flag(options: Common<boolean>): Field<boolean> {
  const expected = "true or false";
  return {
    kind: "field", default: defaultOf(options), doc: options.doc, expected, toYaml: String,
    read: (raw) => (typeof raw === "boolean" ? ok(raw) : no(expected)),
  };
}

export function oneOf<const V extends string>(values: readonly V[], options: Common<NoInfer<V>>): Field<V> {
  const expected = `one of ${values.map((value) => JSON.stringify(value)).join(", ")}`;
  return {
    kind: "field", default: defaultOf(options), doc: options.doc, expected, toYaml: (value) => value,
    read: (raw) =>
      (typeof raw === "string" && (values as readonly string[]).includes(raw) ? ok(raw as V) : no(expected)),
  };
}

/** A count, or the word "auto" (decided at run time); the YAML shows either as it is. */
export function countOrAuto(options: Common<number | "auto"> & { min: number; max: number }): Field<number | "auto"> {
  const expected = `"auto" or an integer from ${options.min} to ${options.max}`;
  return {
    kind: "field", default: defaultOf(options), doc: options.doc, expected, toYaml: String,
    read: (raw) => {
      if (raw === "auto") return ok("auto");
      const n = typeof raw === "string" && /^\d+$/.test(raw) ? Number(raw) : raw;
      if (typeof n !== "number" || !Number.isInteger(n)) return no(expected);
      return inRange(n, options.min, options.max) ? ok(n) : no(expected);
    },
  };
}

/** A string; `valid` narrows it further (a name pattern, a URL) and `expected` says how. */
export function text(
  options: Common<string> & { expected?: string; valid?: (value: string) => boolean },
): Field<string> {
  const expected = options.expected ?? "a non-empty string";
  const valid = options.valid ?? ((value: string) => value.length > 0);
  return {
    kind: "field", default: defaultOf(options), doc: options.doc, expected, toYaml: yamlScalar,
    read: (raw) => (typeof raw === "string" && valid(raw) ? ok(raw) : no(expected)),
  };
}

/** A list of strings, each checked by `entry`; a bad entry is reported at its index. */
export function textList(options: Common<string[]> & { entry: Field<string>; expected: string }): Field<string[]> {
  const expected = options.expected;
  unreadDefault(options.entry, `a list's entry (${expected})`);
  return {
    kind: "field", default: defaultOf(options), doc: options.doc, expected,
    toYaml: (value) => `[${value.map(yamlScalar).join(", ")}]`,
    read: (raw) => {
      if (!Array.isArray(raw)) return no(expected);
      for (const [index, entry] of raw.entries()) {
        if (!options.entry.read(entry).ok) return no(options.entry.expected, { suffix: `[${index}]`, got: entry });
      }
      return ok([...(raw as string[])]);
    },
  };
}

/**
 * Allows null besides the field's own values; null is the default (`field` has none); `nullMeans` says what it
 * means.
 */
export function orNull<T>(field: Field<T>, nullMeans: string): Field<T | null> {
  unreadDefault(field, `orNull (null: ${nullMeans})`);
  const expected = `${field.expected}, or null (${nullMeans})`;
  return {
    kind: "field", default: null, doc: `${field.doc} null: ${nullMeans}.`, expected,
    toYaml: (value) => (value === null ? "null" : field.toYaml(value)),
    read: (raw) => {
      if (raw === null) return ok(null);
      const result = field.read(raw);
      return result.ok ? result : no(`${result.expected}, or null (${nullMeans})`, result.at);
    },
  };
}
