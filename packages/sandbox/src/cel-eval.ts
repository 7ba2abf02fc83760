// Evaluates the CEL that cel.ts parses, for webhook matchConditions: identifiers bound by the
// caller (object, oldObject, request), field selection, indexing, has(), literals, lists, `in`,
// `!`, `==`, `!=`, the orderings, and `&&` / `||` with CEL's rule that a false (true) side
// decides even when the other side is an error. Anything else (other functions, macros, maps)
// is a CelEvalError, as is a missing field or a type mismatch: the caller treats it as the
// expression's evaluation error.

import type { CelExpr } from "./cel.ts";

export class CelEvalError extends Error {}

type Value = unknown;

const typeOf = (v: Value) =>
  v === null ? "null" : Array.isArray(v) ? "list" : typeof v === "object" ? "map" : typeof v;

function select(operand: Value, field: string): Value {
  if (typeOf(operand) !== "map") throw new CelEvalError(`no such key: ${field}`);
  if (!Object.prototype.hasOwnProperty.call(operand, field)) throw new CelEvalError(`no such key: ${field}`);
  return (operand as Record<string, Value>)[field];
}

function equal(a: Value, b: Value): boolean {
  if (typeOf(a) !== typeOf(b)) return false;
  if (Array.isArray(a)) return a.length === (b as Value[]).length && a.every((x, i) => equal(x, (b as Value[])[i]));
  if (typeOf(a) === "map") {
    const [ka, kb] = [Object.keys(a as object), Object.keys(b as object)];
    return ka.length === kb.length && ka.every((k) => k in (b as object) && equal((a as any)[k], (b as any)[k]));
  }
  return a === b;
}

function bool(v: Value, fn: string): boolean {
  if (typeof v !== "boolean") throw new CelEvalError(`no such overload: ${fn} applied to ${typeOf(v)}`);
  return v;
}

/** `a && b` / `a || b`: evaluates both sides; a deciding side wins over an error on the other. */
function logical(expr: Extract<CelExpr, { kind: 1 }>, vars: Record<string, Value>): boolean {
  const decides = expr.fn === "_||_";
  const sides = expr.args.map((arg) => {
    try {
      return { value: bool(evaluate(arg, vars), expr.fn) };
    } catch (error) {
      return { error };
    }
  });
  if (sides.some((s) => "value" in s && s.value === decides)) return decides;
  const failed = sides.find((s) => "error" in s);
  if (failed && "error" in failed) throw failed.error;
  return !decides;
}

function compare(fn: string, a: Value, b: Value): boolean {
  const comparable =
    (typeof a === "number" && typeof b === "number") || (typeof a === "string" && typeof b === "string");
  if (!comparable) throw new CelEvalError(`no such overload: ${fn} applied to (${typeOf(a)}, ${typeOf(b)})`);
  const [x, y] = [a as number | string, b as number | string];
  return fn === "_<_" ? x < y : fn === "_<=_" ? x <= y : fn === "_>_" ? x > y : x >= y;
}

function call(expr: Extract<CelExpr, { kind: 1 }>, vars: Record<string, Value>): Value {
  const { fn, args } = expr;
  if (fn === "_&&_" || fn === "_||_") return logical(expr, vars);
  if (fn === "has" && !expr.target) {
    const field = args[0];
    if (args.length !== 1 || field?.kind !== 7) throw new CelEvalError("invalid argument to has() macro");
    const operand = evaluate(field.operand, vars);
    return typeOf(operand) === "map" && Object.prototype.hasOwnProperty.call(operand, field.field);
  }
  if (expr.target) {
    throw new CelEvalError(`unsupported function ${JSON.stringify(fn)} (the sandbox evaluates a subset of CEL)`);
  }
  const values = args.map((arg) => evaluate(arg, vars));
  const [a, b] = values;
  switch (fn) {
    case "!_": return !bool(a, fn);
    case "-_": if (typeof a === "number") return -a; break;
    case "_==_": return equal(a, b);
    case "_!=_": return !equal(a, b);
    case "_<_": case "_<=_": case "_>_": case "_>=_": return compare(fn, a, b);
    case "@in":
      if (Array.isArray(b)) return b.some((item) => equal(item, a));
      if (typeOf(b) === "map") return typeof a === "string" && Object.prototype.hasOwnProperty.call(b, a);
      break;
    case "_[_]":
      if (Array.isArray(a) && typeof b === "number" && b >= 0 && b < a.length) return a[b];
      if (typeOf(a) === "map" && typeof b === "string") return select(a, b);
      throw new CelEvalError(Array.isArray(a) ? `index out of bounds: ${String(b)}` : `no such key: ${String(b)}`);
    default:
      throw new CelEvalError(`unsupported function ${JSON.stringify(fn)} (the sandbox evaluates a subset of CEL)`);
  }
  throw new CelEvalError(`no such overload: ${fn} applied to (${values.map(typeOf).join(", ")})`);
}

function literal(expr: Extract<CelExpr, { kind: 5 }>): Value {
  switch (expr.type) {
    case "string": return expr.value;
    case "bool": return expr.value === "true";
    case "structpb.NullValue": return null;
    case "int64": case "uint64": case "float64": return Number(expr.value.replace(/u$/, ""));
    default: throw new CelEvalError(`unsupported literal of type ${expr.type}`);
  }
}

/** The value of `expr` with `vars` bound (JSON values); throws CelEvalError. */
export function evaluate(expr: CelExpr, vars: Record<string, Value>): Value {
  switch (expr.kind) {
    case 1: return call(expr, vars);
    case 3:
      if (!Object.prototype.hasOwnProperty.call(vars, expr.name)) {
        throw new CelEvalError(`undeclared reference to '${expr.name}'`);
      }
      return vars[expr.name];
    case 4: return expr.items.map((item) => evaluate(item, vars));
    case 5: return literal(expr);
    case 7: return select(evaluate(expr.operand, vars), expr.field);
    default: throw new CelEvalError("map literals are not supported by the sandbox's CEL");
  }
}
