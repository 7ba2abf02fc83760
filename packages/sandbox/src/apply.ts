// Server-side apply (`application/apply-patch+yaml`) with field ownership, as the
// structured-merge-diff of kube-apiserver does it for what the sandbox serves: each manager's
// fields in `metadata.managedFields` (FieldsV1: `f:` fields, `k:` items of keyed lists); an
// apply that would change a field another manager owns is a 409 naming the managers and fields,
// unless `force=true` takes them over; fields a manager applied before and leaves out now are
// removed (when nobody else owns them). Lists and maps are shaped by the kind's schema, built-in
// or CRD (apply-shape.ts: list maps by all their keys, sets, atomic maps). Writes by
// PUT/PATCH/POST record their `Update` entries in ownership.ts; an apply conflicts with them too.

import { clone, deepEqual } from "./patch.ts";
import { ApiStatusError } from "./status.ts";
import { itemKeyOf, type ApplyShape } from "./apply-shape.ts";
import { fieldsV1Of, IDENTITY, setOf, sortEntries, type ManagedEntry } from "./fields-v1.ts";
import { lastAppliedOf, updateLastApplied } from "./last-applied.ts";

export type { ManagedEntry } from "./fields-v1.ts";

type Fields = Record<string, any>;

const isObj = (v: unknown): v is Record<string, any> => typeof v === "object" && v !== null && !Array.isArray(v);

/** the FieldsV1 set of an applied object; without a shape every list is atomic */
export function fieldsOf(value: Record<string, any>, shape: ApplyShape | undefined, path: string[] = []): Fields {
  const out: Fields = {};
  for (const [k, v] of Object.entries(value)) {
    if (path.length === 0 && (k === "apiVersion" || k === "kind")) continue;
    if (path.length === 1 && path[0] === "metadata" && IDENTITY.has(k)) continue;
    if (v === undefined) continue;
    const at = [...path, k];
    const map = Array.isArray(v) ? shape?.listMap(at) : undefined;
    const keys = map ? v.map((item: unknown) => itemKeyOf(item, map)) : [];
    if (path.length === 0 && k === "metadata") {
      // metadata with only identity fields (name, namespace), or none, owns nothing
      const inner = isObj(v) ? fieldsOf(v, shape, at) : {};
      if (Object.keys(inner).length) out["f:metadata"] = inner;
    } else if (isObj(v) && Object.keys(v).length && !shape?.isAtomicMap(at)) {
      out[`f:${k}`] = fieldsOf(v, shape, at);
    } else if (map && keys.length && keys.every(Boolean)) {
      const items: Fields = {};
      v.forEach((item: any, i: number) => {
        items[`k:${JSON.stringify(keys[i])}`] = { ".": {}, ...fieldsOf(item, shape, at) };
      });
      out[`f:${k}`] = items;
    } else if (Array.isArray(v) && v.length && shape?.isSet(at)) {
      out[`f:${k}`] = Object.fromEntries(v.map((x: unknown) => [`v:${JSON.stringify(x)}`, {}]));
    } else out[`f:${k}`] = {};
  }
  return out;
}

/** every leaf of a field set, as its FieldsV1 key path */
function leaves(set: Fields, prefix: string[] = []): string[][] {
  const out: string[][] = [];
  for (const [k, v] of Object.entries(set)) {
    if (k === ".") continue;
    const children = Object.keys(v).filter((c) => c !== ".");
    if (children.length) out.push(...leaves(v, [...prefix, k]));
    else out.push([...prefix, k]);
  }
  return out;
}

function has(set: Fields, path: string[]): boolean {
  let cur: any = set;
  for (const k of path) { if (!isObj(cur) || !(k in cur)) return false; cur = cur[k]; }
  return true;
}

function without(set: Fields, drop: string[][]): Fields {
  const out = clone(set);
  for (const path of drop) {
    const stack: any[] = [out];
    for (const k of path.slice(0, -1)) stack.push(stack[stack.length - 1]?.[k]);
    delete stack[stack.length - 1]?.[path[path.length - 1]!];
    // drop parents left empty; one owned itself (".") stays, as a set difference leaves it
    for (let i = stack.length - 1; i > 0; i--) {
      if (Object.keys(stack[i] ?? {}).length) break;
      delete stack[i - 1][path[i - 1]!];
    }
  }
  return out;
}

/**
 * the value at a FieldsV1 path (undefined when absent) and a way to remove it; with a shape, items match by their
 * defaulted keys
 */
function locate(obj: any, path: string[], shape?: ApplyShape): { parent: any; at: string | number } | undefined {
  let parent: any;
  let at: string | number = "";
  let cur = obj;
  const names: string[] = [];
  for (const k of path) {
    parent = cur;
    if (k.startsWith("f:") && isObj(cur)) names.push((at = k.slice(2)));
    else if (k.startsWith("k:") && Array.isArray(cur)) {
      const want = JSON.parse(k.slice(2)) as Record<string, unknown>;
      const map = shape?.listMap(names);
      const keyed = (x: any) => map
        ? deepEqual(itemKeyOf(x, map), want)
        : isObj(x) && Object.entries(want).every(([wk, wv]) => deepEqual(x[wk], wv));
      at = cur.findIndex(keyed);
      if (at < 0) return undefined;
    } else if (k.startsWith("v:") && Array.isArray(cur)) {
      const want = JSON.parse(k.slice(2));
      at = cur.findIndex((x) => deepEqual(x, want));
      if (at < 0) return undefined;
    } else return undefined;
    cur = parent[at];
    if (cur === undefined) return undefined;
  }
  return { parent, at };
}

const valueAt = (obj: any, path: string[], shape?: ApplyShape) => {
  const l = locate(obj, path, shape);
  return l ? l.parent[l.at] : undefined;
};

/**
 * merge an applied configuration into the live object: maps deep (unless atomic), list maps by key, sets by value,
 * the rest replaced
 */
function mergeApplied(live: any, applied: any, shape: ApplyShape | undefined, path: string[] = []): any {
  if (!isObj(applied) || !isObj(live)) return clone(applied);
  const out: Record<string, any> = { ...live };
  for (const [k, v] of Object.entries(applied)) {
    const at = [...path, k];
    const map = Array.isArray(v) ? shape?.listMap(at) : undefined;
    if (map && Array.isArray(out[k]) && v.every((x: unknown) => itemKeyOf(x, map))) {
      const merged = [...out[k]];
      for (const item of v) {
        const i = merged.findIndex((x) => deepEqual(itemKeyOf(x, map), itemKeyOf(item, map)));
        if (i >= 0) merged[i] = mergeApplied(merged[i], item, shape, at); else merged.push(clone(item));
      }
      out[k] = merged;
    } else if (Array.isArray(v) && Array.isArray(out[k]) && shape?.isSet(at)) {
      out[k] = [...out[k], ...v.filter((x: unknown) => !out[k].some((y: unknown) => deepEqual(x, y)))];
    } else out[k] = isObj(v) && !shape?.isAtomicMap(at) ? mergeApplied(out[k] ?? {}, v, shape, at) : clone(v);
  }
  return out;
}

/** what a manager owned and no longer applies, nobody else owning it: whole list items, else leaves; deepest first */
function droppedNodes(owned: Fields, applied: Fields, others: ManagedEntry[], prefix: string[] = []): string[][] {
  const out: string[][] = [];
  for (const [k, v] of Object.entries(owned)) {
    if (k === ".") continue;
    const path = [...prefix, k];
    const free = !has(applied, path) && !others.some((e) => has(e.fieldsV1, path));
    const children = Object.keys(v).filter((c) => c !== ".");
    if (k.startsWith("k:") && free) out.push(path);
    else if (children.length) out.push(...droppedNodes(v, applied, others, path));
    else if (free) out.push(path);
  }
  return out.sort((a, b) => b.length - a.length);
}

/**
 * removes the dropped nodes from `result`, and each map or list they leave empty that no one owns itself, as
 * kube-apiserver does: a nested object whose every field the applier dropped goes whole, not as `{}`
 */
function prune(result: any, dropped: string[][], applied: Fields, others: ManagedEntry[], shape?: ApplyShape): void {
  const owned = (path: string[]) => has(applied, path) || others.some((e) => has(e.fieldsV1, path));
  for (const p of dropped) {
    for (let end = p.length; end > 0; end--) {
      const path = p.slice(0, end);
      const l = locate(result, path, shape);
      if (!l) break;
      const value = l.parent[l.at];
      const emptied = end === p.length || (!owned(path) && (isObj(value) || Array.isArray(value))
        && Object.keys(value).length === 0);
      if (!emptied) break;
      if (Array.isArray(l.parent)) l.parent.splice(l.at as number, 1); else delete l.parent[l.at];
    }
  }
}

const displayKey = (k: string) =>
  `[${Object.entries(JSON.parse(k.slice(2))).map(([a, b]) => `${a}=${JSON.stringify(b)}`).join(",")}]`;
const display = (path: string[]) => path.map((k) => (k.startsWith("f:") ? `.${k.slice(2)}` : displayKey(k))).join("");

interface Conflict { entry: ManagedEntry; path: string[] }

/** how the conflict names a manager: quoted, its subresource, " using <apiVersion>" for an Update entry */
function managerOf(e: ManagedEntry): string {
  const sub = e.subresource ? ` with subresource ${JSON.stringify(e.subresource)}` : "";
  const who = `${JSON.stringify(e.manager)}${sub}`;
  return e.operation === "Update" ? `${who} using ${e.apiVersion}` : who;
}

/** the manager's identifier, which the message orders managers by: its entry without fields or time, as JSON */
const identifier = (e: ManagedEntry) => JSON.stringify({
  manager: e.manager, operation: e.operation, ...(e.operation === "Apply" ? {} : { apiVersion: e.apiVersion }),
  ...(e.subresource ? { subresource: e.subresource } : {}),
});

/** a field set's order of paths: element by element, by name */
function byPath(a: string[], b: string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const [x, y] = [a[i]!.slice(2), b[i]!.slice(2)];
    if (x !== y) return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

/**
 * worded as kube-apiserver v1.37.2 words it (its details carry only the causes): one conflict on one line, more
 * listed under each manager in the order of their identifiers
 */
function conflictError(conflicts: Conflict[]): ApiStatusError {
  const n = conflicts.length;
  const byManager = new Map<string, { who: string; fields: string[] }>();
  for (const c of conflicts) {
    const id = identifier(c.entry);
    const group = byManager.get(id) ?? { who: managerOf(c.entry), fields: [] };
    group.fields.push(display(c.path));
    byManager.set(id, group);
  }
  const parts = [...byManager].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, { who, fields }]) => `conflicts with ${who}:\n${fields.map((f) => `- ${f}`).join("\n")}`);
  const message = n === 1
    ? `Apply failed with 1 conflict: conflict with ${managerOf(conflicts[0]!.entry)}: ${display(conflicts[0]!.path)}`
    : `Apply failed with ${n} conflicts: ${parts.join("\n")}`;
  return new ApiStatusError(409, "Conflict", message, {
    causes: conflicts.map((c) => ({
      reason: "FieldManagerConflict", message: `conflict with ${managerOf(c.entry)}`, field: display(c.path),
    })),
  });
}

export interface ApplyRequest {
  manager: string; force: boolean; apiVersion: string; subresource?: string; now: string;
  /** the kind's lists and maps (apply-shape.ts); undefined: every list atomic */
  shape?: ApplyShape;
  /** the fields the write's strategy resets (GetResetFields: a main resource's status, /status's spec): not owned */
  ignored?: string[][];
}

function withoutManaged(object: any): any {
  const { managedFields: _, ...metadata } = object.metadata ?? {};
  return { ...object, metadata };
}

/** the object after `applied` is applied by `req.manager` to `live` (undefined: a create) */
export function applyConfiguration(live: any | undefined, applied: any, req: ApplyRequest): any {
  const appliedSet = without(fieldsOf(applied, req.shape), req.ignored ?? []);
  const appliedLeaves = leaves(appliedSet);
  const entries: ManagedEntry[] = clone(live?.metadata?.managedFields ?? []);
  const mine = (e: ManagedEntry) =>
    e.manager === req.manager && e.operation === "Apply" && (e.subresource ?? "") === (req.subresource ?? "");
  const conflicts: Conflict[] = [];
  const taken = new Map<ManagedEntry, string[][]>();
  for (const e of entries) {
    if (mine(e)) continue;
    const clash = appliedLeaves.filter(
      (p) => has(e.fieldsV1, p) && !deepEqual(valueAt(live, p, req.shape), valueAt(applied, p, req.shape)),
    ).sort(byPath);
    if (!clash.length) continue;
    conflicts.push(...clash.map((path) => ({ entry: e, path })));
    taken.set(e, clash);
  }
  // what the last client-side apply set, and is still so, "kubectl" takes over (lastAppliedManager)
  const last = conflicts.length && !req.force ? lastAppliedOf(live, req.manager, req.apiVersion) : undefined;
  const excused = (p: string[]) => last !== undefined && has(fieldsOf(last, req.shape), p)
    && deepEqual(valueAt(last, p, req.shape), valueAt(live, p, req.shape));
  const blocking = req.force ? [] : conflicts.filter((c) => !excused(c.path));
  if (blocking.length) throw conflictError(blocking);
  const others = entries
    .filter((e) => !mine(e))
    .map((e) => (taken.has(e) ? { ...e, fieldsV1: fieldsV1Of(setOf(without(e.fieldsV1, taken.get(e)!))) } : e))
    .filter((e) => leaves(e.fieldsV1).length > 0);
  // what this manager applied before and leaves out now goes, unless another manager owns it
  let result = live ? mergeApplied(live, applied, req.shape) : clone(applied);
  const before = entries.find(mine);
  if (before) prune(result, droppedNodes(before.fieldsV1, appliedSet, others), appliedSet, others, req.shape);
  // As kube-apiserver: an apply that changes no value keeps its entry's time (none for a new entry), so one that
  // changes no field either stays a no-op (no new resourceVersion, no watch event).
  const unchanged = live !== undefined && deepEqual(withoutManaged(result), withoutManaged(live));
  const time = unchanged ? before?.time : req.now;
  const entry: ManagedEntry = {
    manager: req.manager, operation: "Apply", apiVersion: req.apiVersion, ...(time === undefined ? {} : { time }),
    fieldsType: "FieldsV1", fieldsV1: appliedSet,
    ...(req.subresource ? { subresource: req.subresource } : {}),
  };
  // a manager that owns nothing has no entry
  const managed = sortEntries(leaves(appliedSet).length ? [...others, entry] : others);
  // (none left: an empty list, which the update stores as none)
  result = { ...result, metadata: { ...(result.metadata ?? {}), managedFields: managed } };
  updateLastApplied(result, applied, req.manager);
  return result;
}
