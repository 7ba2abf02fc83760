// The diff base as it is stored on the object, and the diff against it.
//
// Storing the essence as it is fails in two ways (nolar/kopf#1087): a Secret's values end up in
// an annotation that anyone who may read the object's metadata sees (`kubectl describe`), and a
// large object no longer fits (annotations: 256 KiB in total; an etcd object: ~1.5 MiB), so the
// bookkeeping write is refused and the object is handled again and again. So:
// - sensitive fields (a Secret's data/stringData, and every field a handler marks `sensitive`)
//   are stored as a digest of their value, salted with the object's uid: changes are still
//   detected, and the diff names the field without values (`unknown: "sensitive"`);
// - a base whose JSON is larger than the limit is stored as ONE digest of the whole: the next
//   change is detected, but its diff is unavailable (one item `unknown: "too-large"`).
// Pure functions: no I/O, no settings lookup.

import type { Resource } from "../kube/index.ts";
import { getField, type Diff, type DiffItem } from "../declaring/index.ts";
import type { Essence } from "./essence.ts";
import { diffOf } from "./essence.ts";

/** What a digest looks like where a value used to be (a string, so diffs treat it as one value). */
export const DIGEST_PREFIX = "kobun.dev/sha256:";

/** A Secret's values, never stored (stringData is write-only, but a patch may carry it). */
const SECRET_FIELDS: readonly (readonly string[])[] = [["data"], ["stringData"]];

export interface DiffBasePolicy {
  /** Paths in the essence whose values are stored only as digests. */
  sensitive: readonly (readonly string[])[];
  /** Largest stored base, in bytes of JSON; a larger one is stored as one digest. */
  limit: number;
}

/** What is stored: the (redacted) essence, or one digest of it; `text` is its JSON. */
export interface StoredBase {
  base: Essence | string;
  text: string;
}

/** The sensitive paths of a resource: a core Secret's values, plus those its handlers name. */
export function sensitiveFields(resource: Resource, marked: Iterable<readonly string[]>): (readonly string[])[] {
  const out: (readonly string[])[] = resource.group === "" && resource.plural === "secrets" ? [...SECRET_FIELDS] : [];
  for (const path of marked) {
    if (!out.some((p) => p.length === path.length && p.every((k, i) => k === path[i]))) out.push(path);
  }
  return out;
}

export function isDigest(value: unknown): value is string {
  return typeof value === "string" && value.startsWith(DIGEST_PREFIX);
}

/** The essence with every sensitive value replaced by its digest (copied only along those paths). */
export function redact(essence: Essence, sensitive: DiffBasePolicy["sensitive"], salt: string): Essence {
  let out = essence;
  for (const path of sensitive) {
    const value = getPath(out, path);
    if (value === undefined || isDigest(value)) continue;
    out = setPath(out, path, digest(salt, value));
  }
  return out;
}

/** What to store for `essence` (already redacted): itself, or one digest when its JSON exceeds the limit. */
export function storedBase(redacted: Essence, policy: DiffBasePolicy, salt: string): StoredBase {
  const text = JSON.stringify(redacted);
  // UTF-16 length ≤ UTF-8 bytes ≤ 3 × length: count bytes only when it can matter.
  const bytes = text.length * 3 <= policy.limit ? text.length : Buffer.byteLength(text);
  if (bytes <= policy.limit) return { base: redacted, text };
  const whole = digest(salt, redacted);
  return { base: whole, text: JSON.stringify(whole) };
}

/**
 * The diff from the stored base to the current (redacted) essence. A whole-base digest only
 * tells whether anything changed: then the diff is one item with `unknown: "too-large"`.
 */
export function diffFromBase(
  base: Essence | string, redacted: Essence, salt: string,
): { diff: Diff; unavailable: boolean } {
  if (typeof base === "string") {
    if (isDigest(base) && base === digest(salt, redacted)) return { diff: [], unavailable: true };
    const changed: DiffItem = { op: "change", path: [], old: undefined, new: undefined, unknown: "too-large" };
    return { diff: [changed], unavailable: true };
  }
  return { diff: withoutDigests(diffOf(base, redacted)), unavailable: false };
}

/** A diff where digests stand for values: the item names the field, its values stay unknown. */
export function withoutDigests(diff: Diff): Diff {
  if (!diff.some((d) => isDigest(d.old) || isDigest(d.new))) return diff;
  return diff.map((d): DiffItem => (isDigest(d.old) || isDigest(d.new)
    ? { op: d.op, path: d.path, old: undefined, new: undefined, unknown: "sensitive" }
    : d));
}

/**
 * The diff of the field at `path` alone (a field handler's), paths relative to it. A field inside a digested one
 * (a Secret's `data.password`, where `data` is one digest) cannot be told from its siblings: when that digest
 * changed, the field is said changed with its values unknown, so its handler runs at least once per change.
 */
export function fieldDiff(old: Essence | undefined, now: Essence | undefined, path: readonly string[]): Diff {
  for (let depth = 1; depth < path.length; depth++) {
    const prefix = path.slice(0, depth);
    const before = getField(old, prefix);
    const after = getField(now, prefix);
    if (!isDigest(before) && !isDigest(after)) continue;
    if (before === after) return [];
    const op = before === undefined ? "add" : after === undefined ? "remove" : "change";
    return [{ op, path: [], old: undefined, new: undefined, unknown: "sensitive" }];
  }
  return withoutDigests(diffOf(getField(old, path), getField(now, path)));
}

function digest(salt: string, value: unknown): string {
  const hasher = new Bun.CryptoHasher("sha256");
  hasher.update(salt);
  hasher.update("\0");
  hasher.update(canonicalJson(value));
  return DIGEST_PREFIX + hasher.digest("hex");
}

/** JSON with object keys sorted, so equal values give equal digests whatever their key order. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : canonicalJson(v))).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const fields = value as Record<string, unknown>;
    const keys = Object.keys(fields).filter((k) => fields[k] !== undefined).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(fields[k])}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

function getPath(value: unknown, path: readonly string[]): unknown {
  let at: unknown = value;
  for (const key of path) {
    if (typeof at !== "object" || at === null || Array.isArray(at)) return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}

function setPath(target: Essence, path: readonly string[], leaf: unknown): Essence {
  const [key, ...rest] = path;
  const out: Essence = { ...target };
  out[key!] = rest.length === 0 ? leaf : setPath(out[key!] as Essence, rest, leaf);
  return out;
}
