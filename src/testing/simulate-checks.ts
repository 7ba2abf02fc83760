// What a simulated run is judged on: the cluster's state at the end (objects of every resource
// the run wrote, with the volatile fields taken out), compared with the reference run's; and
// what a deletion must not leave behind (an object still being deleted: a finalizer never released).

import type { Sandbox } from "@kobun/sandbox";
import { identityOf, shownName, uidsOut } from "./simulate-identities.ts";

/** fields that differ between two runs of the same story, whatever the operator does */
export const VOLATILE_FIELDS = [
  "metadata.uid", "metadata.resourceVersion", "metadata.creationTimestamp", "metadata.managedFields",
  "metadata.generation", "metadata.ownerReferences.*.uid", "metadata.deletionGracePeriodSeconds",
  // a timestamp, as creationTimestamp: a retry a fault brings moves it (conditions.set stamps handler time)
  "status.conditions.*.lastTransitionTime",
  // a webhook configuration points at the instance's server: a free port, a certificate made at its start
  "webhooks.*.clientConfig",
];

/** resources whose objects are never compared: Events (posted in the background), Leases, Namespaces */
const IGNORED = new Set(["events", "leases", "namespaces"]);

/** the objects at the end of a run, keyed "plural namespace/name" (generated names as "<generateName>*") */
export type Snapshot = Map<string, unknown[]>;

export interface Resources { group: string; plural: string }

/** a path left out of the comparison: dotted, or a list of keys (for a key holding dots) */
export type VolatilePath = string | readonly string[];

/** what the comparison reads uids as: `RunUids.words` (simulate-identities.ts) */
export interface UidWords { words(present: ReadonlyMap<string, string>): ReadonlyMap<string, string> }

export function snapshot(
  sandbox: Sandbox, resources: Iterable<Resources>, volatile: readonly VolatilePath[], uids?: UidWords,
): Snapshot {
  const objects: { plural: string; object: any; identity: string }[] = [];
  for (const { group, plural } of resources) {
    if (IGNORED.has(plural)) continue;
    for (const object of sandbox.store.objects(group, plural)) {
      objects.push({ plural, object, identity: identityOf(plural, object.metadata ?? {}) });
    }
  }
  const present = new Map(objects.map(({ object, identity }) => [object.metadata?.uid, identity]));
  const words = uids?.words(present) ?? new Map<string, string>();
  const state: Snapshot = new Map();
  for (const { object, identity } of objects) {
    const kept = withoutEmptyBookkeeping(withoutPaths(observedRelative(uidsOut(object, words)), volatile));
    if (object.metadata?.generateName) kept.metadata.name = shownName(object.metadata);
    const list = state.get(identity) ?? [];
    list.push(kept);
    state.set(identity, list);
  }
  for (const list of state.values()) list.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  return state;
}

/** the differences of `actual` from `expected`, one line each (at most `maxLines`); empty when equal */
export function differences(expected: Snapshot, actual: Snapshot, maxLines = 12): string[] {
  const lines: string[] = [];
  const keys = [...new Set([...expected.keys(), ...actual.keys()])].sort();
  for (const key of keys) {
    const want = expected.get(key) ?? [];
    const got = actual.get(key) ?? [];
    if (want.length === 0) lines.push(`+ ${key}: left in the cluster, not in the reference run${count(got)}`);
    else if (got.length === 0) lines.push(`- ${key}: missing (the reference run has it)`);
    else if (want.length !== got.length) {
      lines.push(`~ ${key}: ${got.length} objects where the reference has ${want.length}`);
    }
    else for (let i = 0; i < want.length; i++) diffValue(`${key}: `, "", want[i], got[i], lines);
  }
  return lines.length > maxLines ? [...lines.slice(0, maxLines), `... and ${lines.length - maxLines} more`] : lines;
}

/** objects still being deleted: the finalizers that hold each */
export function stuckDeletions(sandbox: Sandbox, resources: Iterable<Resources>): string[] {
  const stuck: string[] = [];
  for (const { group, plural } of resources) {
    if (IGNORED.has(plural)) continue;
    for (const object of sandbox.store.objects(group, plural)) {
      const meta = object.metadata ?? {};
      if (!meta.deletionTimestamp) continue;
      const where = `${plural} ${meta.namespace ? `${meta.namespace}/` : ""}${meta.name}`;
      stuck.push(`${where} is still being deleted, held by the finalizers ${JSON.stringify(meta.finalizers ?? [])}`);
    }
  }
  return stuck;
}

/**
 * `status.observedGeneration` (and each condition's) as it stands to `metadata.generation`, which is volatile:
 * an object deleted and made anew (the recreate fault) counts its generations afresh, and a reconcile that
 * has seen every change of it says so with another number than the reference run's
 */
function observedRelative(object: any): any {
  const generation = object.metadata?.generation;
  const status = object.status;
  if (typeof generation !== "number" || !isRecord(status)) return object;
  const relative = (observed: unknown) => {
    if (typeof observed !== "number") return observed;
    const behind = generation - observed;
    return behind === 0 ? "metadata.generation" : `metadata.generation - ${behind}`;
  };
  const conditions = Array.isArray(status.conditions)
    ? status.conditions.map((c: unknown) =>
      isRecord(c) && "observedGeneration" in c ? { ...c, observedGeneration: relative(c.observedGeneration) } : c)
    : status.conditions;
  const out = { ...status, observedGeneration: relative(status.observedGeneration), conditions };
  if (!("observedGeneration" in status)) delete out.observedGeneration;
  if (!("conditions" in status)) delete out.conditions;
  return { ...object, status: out };
}

/**
 * kobun's own bookkeeping, once empty, is no difference: a handler retried after a failed write
 * may leave an empty `status.kobun.progress` where a first-time success leaves none
 */
function withoutEmptyBookkeeping(object: any): any {
  const status = object.status;
  if (!isRecord(status) || !isRecord(status.kobun)) return object;
  const kobun = status.kobun;
  if (isRecord(kobun.progress) && Object.keys(kobun.progress).length === 0) delete kobun.progress;
  if (Object.keys(kobun).length === 0) delete status.kobun;
  if (Object.keys(status).length === 0) delete object.status;
  return object;
}

function count(objects: unknown[]): string {
  return objects.length > 1 ? ` (${objects.length} of them)` : "";
}

function diffValue(prefix: string, path: string, want: unknown, got: unknown, lines: string[]): void {
  if (JSON.stringify(want) === JSON.stringify(got)) return;
  const bothObjects = isRecord(want) && isRecord(got);
  if (!bothObjects) {
    lines.push(`~ ${prefix}${path || "(the object)"}: ${short(want)} in the reference, ${short(got)} here`);
    return;
  }
  for (const key of [...new Set([...Object.keys(want), ...Object.keys(got)])].sort()) {
    diffValue(prefix, path ? `${path}.${escapeKey(key)}` : escapeKey(key), want[key], got[key], lines);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function short(value: unknown): string {
  if (value === undefined) return "absent";
  const text = JSON.stringify(value);
  return text.length > 160 ? `${text.slice(0, 157)}...` : text;
}

/**
 * a copy of `object` without the `paths`: dotted ("*" for every element of an array or map; `\.` for a dot within a
 * key, since annotations and labels are named by domain: "metadata.annotations.example\\.com/at" in TS), or lists
 * of keys
 */
export function withoutPaths(object: any, paths: readonly VolatilePath[]): any {
  const copy = structuredClone(object);
  const keysOf = (path: string) => path.split(/(?<!\\)\./).map((part) => part.replaceAll("\\.", "."));
  for (const path of paths) drop(copy, typeof path === "string" ? keysOf(path) : [...path]);
  return copy;
}

/** a key as a path names it: its dots escaped, so that a path a report prints can be given as `volatile` */
function escapeKey(key: string): string {
  return key.replaceAll(".", "\\.");
}

function drop(value: any, parts: string[]): void {
  if (value === null || typeof value !== "object" || parts.length === 0) return;
  const [head, ...rest] = parts as [string, ...string[]];
  if (head === "*" && rest.length === 0) {
    // the path ends here: every key or element goes (`metadata.annotations.*`), not what each holds
    if (Array.isArray(value)) value.length = 0;
    else for (const key of Object.keys(value)) delete value[key];
    return;
  }
  if (head === "*") {
    for (const item of Object.values(value)) drop(item, rest);
    return;
  }
  if (rest.length === 0) {
    delete value[head];
    return;
  }
  drop(value[head], rest);
}
