// `shardSelector` on LIST and WATCH, as kube-apiserver serves it with the ShardedListAndWatch
// feature gate (KEP-5866, alpha in 1.36): `shardRange(object.metadata.uid, '0x…', '0x…')`
// ranges joined by `||`, each `[start, end)` over the 64-bit FNV-1a hash of the object's uid
// or namespace. A list answers with the selector it applied, normalised, in
// `metadata.shardInfo.selector`; that echo is how a client learns the server filtered.
//
// The real server's facts reproduced here (probed on v1.37.2): bounds are 16 lowercase hex
// digits after `0x`, or exactly `0x10000000000000000` (2^64) as an end; every range must use
// the same field; a malformed selector is a 500 Status with no reason and the message
// `invalid shard selector: …`; an empty parameter means "no selector", a blank one is an error.
// This file does not share code with src/sharding/ on purpose: it is the independent model.

import { CelSyntaxError, parseCel, type CelExpr } from "./cel.ts";
import { ApiStatusError } from "./status.ts";

const FIELDS = ["object.metadata.uid", "object.metadata.namespace"];
const TWO_TO_64 = 1n << 64n;

interface ShardRange { field: string; start: string; end: string }

export interface ShardFilter {
  /** The normalised selector, for `metadata.shardInfo.selector`. */
  echo: string;
  matches(object: any): boolean;
}

function invalid(message: string): ApiStatusError {
  return new ApiStatusError(500, "", `invalid shard selector: ${message}`);
}

/** FNV-1a, 64-bit, over the UTF-8 bytes of `value`. */
function fnv1a64(value: string): bigint {
  let hash = 0xcbf29ce484222325n;
  for (const byte of new TextEncoder().encode(value)) {
    hash = ((hash ^ BigInt(byte)) * 0x100000001b3n) & (TWO_TO_64 - 1n);
  }
  return hash;
}

/**
 * Hashes by value, remembered: every event is matched against each shard-selected watch (one
 * per replica) and an object's uid is hashed on every write, at ~5 µs of bigint arithmetic each.
 * Bounded: forgotten wholesale past HASHES_KEPT values (uids of deleted objects go with it).
 */
const HASHES_KEPT = 100_000;
const hashes = new Map<string, bigint>();
function hashOf(value: string): bigint {
  let hash = hashes.get(value);
  if (hash === undefined) {
    if (hashes.size >= HASHES_KEPT) hashes.clear();
    hashes.set(value, (hash = fnv1a64(value)));
  }
  return hash;
}

function bound(arg: CelExpr, name: "hexStart" | "hexEnd"): string {
  if (arg.kind !== 5) throw invalid(`${name} must be a string literal, got expression kind ${arg.kind}`);
  if (arg.type !== "string") throw invalid(`${name} must be a string literal, got ${arg.type}`);
  const text = arg.value;
  if (!text.startsWith("0x")) throw invalid(`${name} must have '0x' prefix, got ${JSON.stringify(text)}`);
  const digits = text.slice(2);
  if (digits === "") throw invalid(`${name}: hex value is required after '0x'`);
  const wrong = /[^0-9a-f]/.exec(digits);
  if (wrong) throw invalid(`${name}: invalid hex character ${JSON.stringify(wrong[0])} in ${JSON.stringify(text)}`);
  if (digits.length > 17) {
    throw invalid(`${name}: hex value too long (${digits.length} chars, max 17): ${JSON.stringify(digits)}`);
  }
  if (digits.length === 17 && digits !== "10000000000000000") {
    throw invalid(`${name}: 17-digit hex value must be '0x10000000000000000' (2^64), got ${JSON.stringify(text)}`);
  }
  if (digits.length < 16) {
    const meant = `did you mean "0x${digits.padStart(16, "0")}"?`;
    throw invalid(`${name} must be a 0x-prefixed 16-digit hex value, got ${JSON.stringify(text)} (${meant})`);
  }
  return text;
}

function fieldPath(arg: CelExpr): string {
  const parts: string[] = [];
  let at: CelExpr = arg;
  while (at.kind === 7) { parts.unshift(at.field); at = at.operand; }
  if (at.kind !== 3) {
    throw invalid(
      `shardRange() first argument: expected field path (e.g. object.metadata.uid), got expression kind ${arg.kind}`,
    );
  }
  parts.unshift(at.name);
  const path = parts.join(".");
  if (!FIELDS.includes(path)) {
    throw invalid(`unsupported field path ${JSON.stringify(path)}; supported: ${FIELDS.join(", ")}`);
  }
  return path;
}

/** The ranges of an expression, left to right, each validated before the next is looked at. */
function ranges(expr: CelExpr, out: ShardRange[]): ShardRange[] {
  if (expr.kind !== 1) {
    throw invalid(`unexpected expression kind ${expr.kind}; expected shardRange() call or || operator`);
  }
  if (expr.fn === "_||_") {
    ranges(expr.args[0]!, out);
    return ranges(expr.args[1]!, out);
  }
  if (expr.fn !== "shardRange") {
    throw invalid(`unsupported function ${JSON.stringify(expr.fn)}; only shardRange() and || are allowed`);
  }
  if (expr.args.length !== 3) throw invalid(`shardRange() requires exactly 3 arguments, got ${expr.args.length}`);
  const field = fieldPath(expr.args[0]!);
  const start = bound(expr.args[1]!, "hexStart");
  const end = bound(expr.args[2]!, "hexEnd");
  if (BigInt(start) >= BigInt(end)) throw invalid(`shard range start ${start} must be less than end ${end}`);
  out.push({ field, start, end });
  return out;
}

/**
 * The `shardSelector` query parameter as a filter, or undefined when there is none (absent,
 * empty, or the feature gate off: then the server ignores the parameter, as an old one does).
 */
export function shardFilter(q: URLSearchParams, enabled: boolean): ShardFilter | undefined {
  const raw = q.get("shardSelector");
  if (!enabled || raw === null || raw === "") return undefined;
  if (raw.trim() === "") throw invalid("empty shard selector is not allowed; omit the parameter for unfiltered lists");
  let expr: CelExpr;
  try {
    expr = parseCel(raw);
  } catch (error) {
    if (error instanceof CelSyntaxError) throw invalid(`CEL parse error: Syntax error: ${error.message}`);
    throw error;
  }
  const found = ranges(expr, []);
  const other = found.find((r) => r.field !== found[0]!.field);
  if (other) {
    const fields = `${JSON.stringify(found[0]!.field)} and ${JSON.stringify(other.field)}`;
    throw invalid(`all shard ranges must use the same field, got ${fields}`);
  }
  const bounds = found.map((r) => [BigInt(r.start), BigInt(r.end)] as const);
  const key = found[0]!.field === "object.metadata.uid" ? "uid" : "namespace";
  return {
    echo: found.map((r) => `shardRange(${r.field}, '${r.start}', '${r.end}')`).join(" || "),
    matches(object: any): boolean {
      const hash = hashOf(String(object?.metadata?.[key] ?? ""));
      return bounds.some(([start, end]) => start <= hash && hash < end);
    },
  };
}

/** Both predicates at once (either may be absent). */
export function withShards<T extends (object: any) => boolean>(
  selector: T | undefined, shards: ShardFilter | undefined,
): ((object: any) => boolean) | undefined {
  if (!shards) return selector;
  if (!selector) return (object) => shards.matches(object);
  return (object) => selector(object) && shards.matches(object);
}
