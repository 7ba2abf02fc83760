// The value checks of a custom resource's structural schema, made where kube-openapi's validators
// make them and worded as the apiextensions-apiserver turns their results into field errors
// (kubeOpenAPIResultToFieldErrors): `required` → Required value, `enum` → Unsupported value,
// `maxLength` → Too long, `maxItems` / `maxProperties` → Too many, the rest → Invalid value with
// kube-openapi's "<path> in body should …". At one level, in kube-openapi's order: a string's
// maxLength, minLength, pattern (the first that fails, only); a number's multipleOf, minimum,
// maximum; an array's items (by the caller), then minItems, maxItems; enum; an object's
// minProperties, maxProperties, its properties (by the caller), then `required`.
// Not checked: `format` but `date-time`, `uniqueItems` (refused in structural schemas), allOf/anyOf/oneOf/not,
// and `x-kubernetes-validations` (CEL) rules.

import { deepEqual } from "./patch.ts";

type Schema = Record<string, any>;
export interface Cause { reason: string; message: string; field: string }

/**
 * A bad value as the field error renders it: strings quoted, numbers and booleans bare, the rest as JSON.
 */
function shown(value: unknown): string {
  return JSON.stringify(value) ?? "null";
}

/** `noun`, or its plural for any count but one */
const plural = (n: number, noun: string) => (n === 1 ? noun : `${noun}s`);

const invalid = (field: string, value: unknown, detail: string): Cause =>
  ({ reason: "FieldValueInvalid", message: `Invalid value: ${shown(value)}: ${field} in body ${detail}`, field });

const tooMany = (field: string, actual: number, max: number): Cause =>
  ({ reason: "FieldValueTooMany", message: `Too many: ${actual}: must have at most ${max} ${plural(max, "item")}`,
    field });

const patterns = new Map<string, RegExp | null>();
/**
 * The schema's pattern as a RegExp (RE2 and JavaScript agree on what CRDs use);
 * null when JavaScript cannot compile it.
 */
function patternOf(source: string): RegExp | null {
  let compiled = patterns.get(source);
  if (compiled === undefined) {
    try {
      compiled = new RegExp(source, "u");
    } catch {
      compiled = null;
    }
    patterns.set(source, compiled);
  }
  return compiled;
}

function stringCause(value: string, s: Schema, field: string): Cause | undefined {
  const length = [...value].length; // in characters, as kube-openapi counts (the message says bytes)
  if (typeof s.maxLength === "number" && length > s.maxLength) {
    const message = `Too long: may not be more than ${s.maxLength} ${plural(s.maxLength, "byte")}`;
    return { reason: "FieldValueTooLong", message, field };
  }
  if (typeof s.minLength === "number" && length < s.minLength) {
    return invalid(field, value, `should be at least ${s.minLength} chars long`);
  }
  const pattern = typeof s.pattern === "string" ? patternOf(s.pattern) : null;
  if (pattern && !pattern.test(value)) return invalid(field, value, `should match '${s.pattern}'`);
  return undefined;
}

/**
 * kube-openapi's `date-time` check (strfmt's IsDateTime): a date, "T" (either case), then hh:mm:ss, an optional
 * fraction, and "Z" or an offset, each part in its range.
 */
function isDateTime(text: string): boolean {
  const [date, time] = text.toLowerCase().split("t");
  if (text.length < 4 || date === undefined || time === undefined || !isDate(date)) return false;
  const parts = /^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$/.exec(time);
  if (!parts) return false;
  return Number(parts[1]) <= 23 && Number(parts[2]) <= 59 && Number(parts[3]) <= 59;
}

/** Go's time.Parse("2006-01-02"): four digits, two, two, and a day the month has. */
function isDate(text: string): boolean {
  const parts = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/.exec(text);
  if (!parts) return false;
  const [year, month, day] = [Number(parts[1]), Number(parts[2]), Number(parts[3])];
  return month >= 1 && month <= 12 && day >= 1 && day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}

function numberCauses(value: number, s: Schema, field: string, out: Cause[]): void {
  if (typeof s.multipleOf === "number" && s.multipleOf > 0) {
    const quotient = value / s.multipleOf;
    if (Math.abs(quotient - Math.round(quotient)) > 1e-9 * Math.max(1, Math.abs(quotient))) {
      out.push(invalid(field, value, `should be a multiple of ${s.multipleOf}`));
    }
  }
  if (typeof s.minimum === "number") {
    const exclusive = s.exclusiveMinimum === true;
    if (exclusive ? value <= s.minimum : value < s.minimum) {
      out.push(invalid(field, value, `should be greater than ${exclusive ? "" : "or equal to "}${s.minimum}`));
    }
  }
  if (typeof s.maximum === "number") {
    const exclusive = s.exclusiveMaximum === true;
    if (exclusive ? value >= s.maximum : value > s.maximum) {
      out.push(invalid(field, value, `should be less than ${exclusive ? "" : "or equal to "}${s.maximum}`));
    }
  }
}

/** A value outside the schema's `enum`, as Unsupported value with every allowed one. */
function enumCause(value: unknown, s: Schema, field: string): Cause | undefined {
  if (!Array.isArray(s.enum) || s.enum.some((allowed) => deepEqual(allowed, value))) return undefined;
  const allowed = s.enum.map((v) => JSON.stringify(typeof v === "string" ? v : JSON.stringify(v))).join(", ");
  const message = `Unsupported value: ${shown(value)}: supported values: ${allowed}`;
  return { reason: "FieldValueNotSupported", message, field };
}

/**
 * The checks of a value that is not an object, at its own level (an array's items are the caller's, before this).
 */
export function valueCauses(value: unknown, s: Schema, path: string, out: Cause[]): void {
  if (value === undefined) return;
  const field = path || "<root>";
  if (value === null) {
    // a null (of a nullable field) meets the enum alone, as in kube-openapi's validator
    const cause = enumCause(value, s, field);
    if (cause) out.push(cause);
    return;
  }
  if (typeof value === "string") {
    const cause = stringCause(value, s, field);
    if (cause) out.push(cause);
    if (s.format === "date-time" && !isDateTime(value)) {
      out.push(invalid(field, value, `must be of type date-time: ${shown(value)}`));
    }
  } else if (typeof value === "number") numberCauses(value, s, field, out);
  else if (Array.isArray(value)) {
    if (typeof s.minItems === "number" && value.length < s.minItems) {
      out.push(invalid(field, value.length, `should have at least ${s.minItems} items`));
    }
    if (typeof s.maxItems === "number" && value.length > s.maxItems) out.push(tooMany(field, value.length, s.maxItems));
  }
  const cause = enumCause(value, s, field);
  if (cause) out.push(cause);
}

/** An object's checks before its properties are: enum, minProperties, maxProperties. */
export function objectCauses(value: Record<string, unknown>, s: Schema, path: string, out: Cause[]): void {
  const field = path || "<root>";
  const cause = enumCause(value, s, field);
  if (cause) out.push(cause);
  const count = Object.keys(value).length;
  if (typeof s.minProperties === "number" && count < s.minProperties) {
    out.push(invalid(field, count, `should have at least ${s.minProperties} properties`));
  }
  if (typeof s.maxProperties === "number" && count > s.maxProperties) out.push(tooMany(field, count, s.maxProperties));
}

/** An object's `required` properties it lacks (checked after its properties, as kube-openapi does). */
export function requiredCauses(value: Record<string, unknown>, s: Schema, path: string, out: Cause[]): void {
  if (!Array.isArray(s.required)) return;
  for (const key of s.required) {
    if (typeof key !== "string" || key in value) continue;
    out.push({ reason: "FieldValueRequired", message: "Required value", field: path ? `${path}.${key}` : key });
  }
}
