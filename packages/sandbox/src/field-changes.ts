// What a write changed, as the field manager of kube-apiserver sees it (ownership.ts records it):
// the object before and after are walked together by the kind's schema (keyed lists, sets,
// atomic maps; untyped where there is none), and every FieldsV1 path the write added, or whose
// leaf value it changed, is touched; every path it dropped is removed. Only the part the write
// owns fields in is walked (all but status, or only status on /status).

import { deepEqual } from "./patch.ts";
import { resolveSchema, schemaRef } from "./kube-schemas.ts";
import { IDENTITY, isObj, under } from "./fields-v1.ts";

/** what the walks need of a write (ownership.ts's UpdateRequest): its kind's schema, and the part it writes */
export interface WriteScope {
  subresource?: string;
  /** the built-in kind's schema name, or undefined for a custom resource */
  schema?: string;
  /** a custom resource's schema to walk (apply-shape.ts schemaRootOf): its list maps, sets and atomic maps */
  customSchema?: unknown;
  /** the resource has a status subresource: the main resource's writes own no status, and /status only status */
  statusful: boolean;
}

/** every node of an object, by its FieldsV1 path (joined by SEP): whether it is a leaf, its value */
type Nodes = Map<string, { leaf: boolean; value: unknown }>;

function itemKey(item: unknown, s: any): string | undefined {
  if (s?.["x-kubernetes-list-type"] === "set") return `v:${JSON.stringify(item)}`;
  const keys: string[] | undefined = s?.["x-kubernetes-list-map-keys"];
  if (s?.["x-kubernetes-list-type"] !== "map" || !keys || !isObj(item)) return undefined;
  const key: Record<string, unknown> = {};
  for (const k of [...keys].sort()) if (item[k] !== undefined) key[k] = item[k];
  return `k:${JSON.stringify(key)}`;
}

function walk(value: unknown, schema: unknown, typed: boolean, path: string, out: Nodes): void {
  const s = typed ? resolveSchema(schema) : undefined;
  if (Array.isArray(value)) {
    const items = typed ? resolveSchema(s?.items) : undefined;
    const keys = value.map((item) => itemKey(item, s));
    const leaf = !keys.length || keys.some((k) => k === undefined);
    if (path) out.set(path, { leaf, value });
    if (leaf) return;
    value.forEach((item, i) => {
      const p = under(path, keys[i]!);
      if (keys[i]!.startsWith("v:")) out.set(p, { leaf: true, value: item });
      else walk(item, items, typed, p, out);
    });
    return;
  }
  let leaf = !isObj(value) || s?.["x-kubernetes-map-type"] === "atomic";
  if (!leaf) { leaf = true; for (const _ in value as object) { leaf = false; break; } }
  if (path) out.set(path, { leaf, value });
  if (leaf) return;
  const props = isObj(s?.properties) ? s.properties : undefined;
  const map = value as Record<string, unknown>;
  for (const k in map) {
    const v = map[k];
    if (v === undefined) continue;
    if (path === "" && (k === "apiVersion" || k === "kind")) continue;
    if (path === "f:metadata" && IDENTITY.has(k)) continue;
    const child = props ? props[k] : s?.additionalProperties;
    walk(v, child, typed && child !== undefined, under(path, `f:${k}`), out);
  }
}

/** the part of an object a write by `req` owns fields in: all but status, or only status */
function ownedPart(obj: any, req: WriteScope): Record<string, any> {
  const body: Record<string, any> = { ...obj };
  if (req.statusful && req.subresource === "status") {
    for (const k of Object.keys(body)) if (k !== "status") delete body[k];
  }
  else if (req.statusful) delete body.status;
  return body;
}

function nodesOf(obj: any, req: WriteScope): Nodes {
  const out: Nodes = new Map();
  const root = req.schema ? schemaRef(req.schema) : req.customSchema;
  walk(ownedPart(obj, req), root, root !== undefined, "", out);
  return out;
}

/** what a write changed, by FieldsV1 path: nodes it added or whose leaf value changed, and nodes it removed */
interface Changes { touched: Set<string>; removed: Set<string> }

/** a keyed list with two items of one key: its nodes merge (diff falls back to the two node maps) */
const DUPLICATE_KEY = Symbol("duplicate list key");

/** every node of a subtree into `into` (walk's nodes, paths only) */
function addAll(value: unknown, schema: unknown, typed: boolean, path: string, into: Set<string>): void {
  const nodes: Nodes = new Map();
  walk(value, schema, typed, path, nodes);
  for (const p of nodes.keys()) into.add(p);
}

/** a list's item keys, or undefined when it is a leaf (empty, or an item without a key) */
function itemKeys(list: unknown[], s: any): string[] | undefined {
  if (!list.length) return undefined;
  const keys = new Array<string>(list.length);
  for (let i = 0; i < list.length; i++) {
    const k = itemKey(list[i], s);
    if (k === undefined) return undefined;
    keys[i] = k;
  }
  return keys;
}

/** a non-leaf list's items by key */
function byKey(list: unknown[], keys: string[]): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (let i = 0; i < list.length; i++) {
    if (out.has(keys[i]!)) throw DUPLICATE_KEY;
    out.set(keys[i]!, list[i]);
  }
  return out;
}

/** an object node's children (walk's rules: undefined values, and the identity fields, are not fields) */
function fieldsOf(value: unknown, s: any, path: string): Record<string, unknown> | undefined {
  if (!isObj(value) || s?.["x-kubernetes-map-type"] === "atomic") return undefined;
  for (const _ in value) return value;
  return undefined;
}
const skipped = (path: string, k: string) =>
  (path === "" && (k === "apiVersion" || k === "kind")) || (path === "f:metadata" && IDENTITY.has(k));

/**
 * One walk over both versions, by the same rules as walk: a node is touched when new or a leaf
 * whose value changed, removed when gone. Both `a` and `b` are present at `path`.
 */
function diff(a: unknown, b: unknown, schema: unknown, typed: boolean, path: string, ch: Changes): void {
  const s = typed ? resolveSchema(schema) : undefined;
  if (Array.isArray(b)) {
    const kb = itemKeys(b, s);
    const ka = Array.isArray(a) ? itemKeys(a, s) : undefined;
    if (kb === undefined) {
      if (path && !deepEqual(a, b)) ch.touched.add(path);
      removeChildren(a, ka, s, typed, path, ch);
      return;
    }
    const items = typed ? resolveSchema(s?.items) : undefined;
    const old = ka === undefined ? undefined : byKey(a as unknown[], ka);
    const mine = byKey(b, kb);
    for (const [k, item] of mine) {
      const p = under(path, k);
      const was = old?.get(k);
      const had = old?.has(k) ?? false;
      if (k.startsWith("v:")) { if (!had || !deepEqual(was, item)) ch.touched.add(p); }
      else if (had) diff(was, item, items, typed, p, ch);
      else addAll(item, items, typed, p, ch.touched);
    }
    if (old) for (const [k, item] of old) if (!mine.has(k)) removeSubtree(k, item, items, typed, under(path, k), ch);
    if (!Array.isArray(a)) removeChildren(a, undefined, s, typed, path, ch);
    return;
  }
  const fields = fieldsOf(b, s, path);
  if (fields === undefined) {
    if (path && !deepEqual(a, b)) ch.touched.add(path);
    removeChildren(a, Array.isArray(a) ? itemKeys(a, s) : undefined, s, typed, path, ch);
    return;
  }
  const props = isObj(s?.properties) ? s.properties : undefined;
  const oldFields = Array.isArray(a) ? undefined : fieldsOf(a, s, path);
  for (const k in fields) {
    const v = fields[k];
    if (v === undefined || skipped(path, k)) continue;
    const child = props ? props[k] : s?.additionalProperties;
    const was = oldFields?.[k];
    if (was !== undefined) diff(was, v, child, typed && child !== undefined, under(path, `f:${k}`), ch);
    else addAll(v, child, typed && child !== undefined, under(path, `f:${k}`), ch.touched);
  }
  if (oldFields) {
    for (const k in oldFields) {
      if (oldFields[k] === undefined || fields[k] !== undefined || skipped(path, k)) continue;
      const child = props ? props[k] : s?.additionalProperties;
      addAll(oldFields[k], child, typed && child !== undefined, under(path, `f:${k}`), ch.removed);
    }
  } else if (Array.isArray(a)) removeChildren(a, itemKeys(a, s), s, typed, path, ch);
}

function removeSubtree(k: string, item: unknown, items: unknown, typed: boolean, path: string, ch: Changes): void {
  if (k.startsWith("v:")) ch.removed.add(path);
  else addAll(item, items, typed, path, ch.removed);
}

/** `a`'s children at `path` are all gone (`b` there is a leaf, or of another shape) */
function removeChildren(
  a: unknown, keys: string[] | undefined, s: any, typed: boolean, path: string, ch: Changes,
): void {
  if (Array.isArray(a)) {
    if (keys === undefined) return;
    const items = typed ? resolveSchema(s?.items) : undefined;
    for (let i = 0; i < a.length; i++) removeSubtree(keys[i]!, a[i], items, typed, under(path, keys[i]!), ch);
    return;
  }
  const fields = fieldsOf(a, s, path);
  if (!fields) return;
  const props = isObj(s?.properties) ? s.properties : undefined;
  for (const k in fields) {
    if (fields[k] === undefined || skipped(path, k)) continue;
    const child = props ? props[k] : s?.additionalProperties;
    addAll(fields[k], child, typed && child !== undefined, under(path, `f:${k}`), ch.removed);
  }
}

/** the paths a write of `next` over `before` touched and removed */
export function changesOf(before: any, next: any, req: WriteScope, createOfCustom: boolean): Changes {
  const root = req.schema ? schemaRef(req.schema) : req.customSchema;
  const ch: Changes = { touched: new Set(), removed: new Set() };
  try {
    diff(ownedPart(before, req), ownedPart(next, req), root, root !== undefined, "", ch);
    return ch;
  } catch (error) {
    if (error !== DUPLICATE_KEY) throw error;
  }
  // a list with a key twice: its items' nodes merge, which the one-walk diff does not model
  const was = nodesOf(before, req);
  if (createOfCustom) was.set("f:metadata", { leaf: false, value: {} });
  const now = nodesOf(next, req);
  const fallback: Changes = { touched: new Set(), removed: new Set() };
  for (const [p, n] of now) {
    const w = was.get(p);
    if (!w || (n.leaf && !deepEqual(w.value, n.value))) fallback.touched.add(p);
  }
  for (const p of was.keys()) if (!now.has(p)) fallback.removed.add(p);
  return fallback;
}
