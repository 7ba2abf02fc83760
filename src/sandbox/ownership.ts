// Field ownership of writes that are not server-side apply (POST, PUT, non-apply PATCH), as
// kube-apiserver's field manager records them: the manager (the fieldManager query, else the
// User-Agent's product) gets an `Update` entry owning what it added or changed, compared with
// the stored object (for a create, with the kind's Go zero value: fields a Go struct always has,
// such as a Deployment's spec.template, are not "added", so they carry no "." of their own);
// other managers lose what it changed, everyone loses what it removed. A later apply then
// conflicts with these managers as on the real server (apply.ts). Objects are walked by their
// kind's schema (keyed lists, sets, atomic maps): a built-in's published one, a CRD's own.

import { deepEqual } from "./patch.ts";
import { resolveSchema, schemaRef } from "./kube-schemas.ts";
import type { ManagedEntry } from "./apply.ts";

const IDENTITY = new Set(["name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"]);
const isObj = (v: unknown): v is Record<string, any> => typeof v === "object" && v !== null && !Array.isArray(v);
const SEP = "\u0000";

/** every node of an object, by its FieldsV1 path (joined by SEP): whether it is a leaf, its value */
type Nodes = Map<string, { leaf: boolean; value: unknown }>;

/** who writes: the manager, and the subresource its entry names when not the one written (/scale writes the main object) */
export interface Writer { manager: string; subresource?: string }

export interface UpdateRequest {
  manager: string; apiVersion: string; now: string; subresource?: string;
  /** the built-in kind's schema name (its Go zero value is the "before" of a create), or undefined for a custom resource */
  schema?: string;
  /** a custom resource's schema to walk (apply-shape.ts schemaRootOf): its list maps, sets and atomic maps */
  customSchema?: unknown;
  /** the resource has a status subresource: the main resource's writes own no status, and /status only status */
  statusful: boolean;
}

/** the User-Agent's product, as kube-apiserver names a manager that gave no fieldManager */
export function managerFromUserAgent(userAgent: string | null): string {
  const product = (userAgent ?? "").split("/")[0] ?? "";
  return [...product].filter((c) => c >= " " && c !== "\u007f").join("").slice(0, 128);
}

function itemKey(item: unknown, s: any): string | undefined {
  if (s?.["x-kubernetes-list-type"] === "set") return `v:${JSON.stringify(item)}`;
  const keys: string[] | undefined = s?.["x-kubernetes-list-map-keys"];
  if (s?.["x-kubernetes-list-type"] !== "map" || !keys || !isObj(item)) return undefined;
  const key: Record<string, unknown> = {};
  for (const k of [...keys].sort()) if (item[k] !== undefined) key[k] = item[k];
  return `k:${JSON.stringify(key)}`;
}

// paths are built as joined strings ("" is the root) so a write allocates no array per node
const under = (path: string, k: string) => (path ? path + SEP + k : k);

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

/** a kind's Go zero value as the field manager sees it: struct fields without omitempty are there */
function zeroOf(schema: unknown, depth = 0): any {
  const s = resolveSchema(schema);
  if (!isObj(s?.properties) || depth > 8) return {};
  const out: Record<string, any> = {};
  const required: string[] = s.required ?? [];
  for (const [k, prop] of Object.entries<any>(s.properties)) {
    if (isObj(prop.default) && !Object.keys(prop.default).length) out[k] = zeroOf(prop, depth + 1);
    else if (required.includes(k)) out[k] = null;
  }
  return out;
}

const zeros = new Map<string, any>();
/** zeroOf a built-in kind by its schema name, computed once (read only: nodesOf copies before it changes anything) */
function zeroOfKind(schema: string | undefined): any {
  if (schema === undefined) return {};
  if (!zeros.has(schema)) zeros.set(schema, zeroOf(schemaRef(schema)));
  return zeros.get(schema);
}

function nodesOf(obj: any, req: UpdateRequest): Nodes {
  const body: Record<string, any> = { ...obj };
  if (req.statusful && req.subresource === "status") for (const k of Object.keys(body)) { if (k !== "status") delete body[k]; }
  else if (req.statusful) delete body.status;
  const out: Nodes = new Map();
  const root = req.schema ? schemaRef(req.schema) : req.customSchema;
  walk(body, root, root !== undefined, "", out);
  return out;
}

export function setOf(fields: Record<string, any>, prefix = "", out = new Set<string>()): Set<string> {
  for (const k in fields) {
    if (k === ".") { out.add(prefix); continue; }
    const v = fields[k];
    const p = under(prefix, k);
    let leaf = true;
    if (isObj(v)) for (const _ in v) { leaf = false; break; }
    if (leaf) out.add(p);
    else setOf(v, p, out);
  }
  return out;
}

export function fieldsV1Of(set: Set<string>): Record<string, any> {
  const root: Record<string, any> = {};
  // a member that also has children is marked by "." (".": {} first, as the real server orders
  // it): every member's node starts with one, taken off again where no child came
  const members: Record<string, any>[] = [];
  for (const member of set) {
    let cur = root;
    let prefix = "";
    member.split(SEP).forEach((k, i) => {
      prefix = i ? prefix + SEP + k : k;
      let node = cur[k];
      if (!node) {
        node = cur[k] = set.has(prefix) ? { ".": {} } : {};
        if (set.has(prefix)) members.push(node);
      }
      cur = node;
    });
  }
  for (const node of members) if (Object.keys(node).length === 1) delete node["."];
  return root;
}

/** the managedFields after a write of `next` over `old` (undefined: a create) by `req.manager` */
export function recordUpdate(old: any | undefined, next: any, req: UpdateRequest): ManagedEntry[] {
  // read only: every entry returned is a new object
  const entries: ManagedEntry[] = next.metadata?.managedFields ?? old?.metadata?.managedFields ?? [];
  const before = nodesOf(old ?? zeroOfKind(req.schema), req);
  if (!old && !req.schema) before.set("f:metadata", { leaf: false, value: {} });
  const after = nodesOf(next, req);
  const touched = new Set<string>();
  const removed = new Set<string>();
  for (const [p, n] of after) {
    const was = before.get(p);
    if (!was || (n.leaf && !deepEqual(was.value, n.value))) touched.add(p);
  }
  for (const p of before.keys()) if (!after.has(p)) removed.add(p);
  const same = (e: ManagedEntry) => e.manager === req.manager && e.operation === "Update" && e.apiVersion === req.apiVersion && (e.subresource ?? "") === (req.subresource ?? "");
  const out: ManagedEntry[] = [];
  let mine = new Set<string>();
  let mineBefore = 0;
  for (const e of entries) {
    const set = setOf(e.fieldsV1);
    if (same(e)) { mine = set; mineBefore = set.size; continue; }
    for (const p of [...touched, ...removed]) set.delete(p);
    if (set.size) out.push({ ...e, fieldsV1: fieldsV1Of(set) });
  }
  const previous = entries.find(same);
  const grown = [...touched].some((p) => !mine.has(p));
  for (const p of touched) mine.add(p);
  for (const p of removed) mine.delete(p);
  if (mine.size) {
    // the time moves only when the manager's fields change, so a no-op write stays a no-op
    const time = previous && !grown && mineBefore === mine.size ? previous.time : req.now;
    out.push({
      manager: req.manager, operation: "Update", apiVersion: req.apiVersion, fieldsType: "FieldsV1", fieldsV1: fieldsV1Of(mine),
      // kube-apiserver v1.37.2 records a /scale write's entry without a time
      ...(req.subresource === "scale" ? {} : { time }),
      ...(req.subresource ? { subresource: req.subresource } : {}),
    });
  }
  return sortEntries(out);
}

/** kube-apiserver's order: operation (Apply first), time to the second, manager, apiVersion, subresource */
export function sortEntries(entries: ManagedEntry[]): ManagedEntry[] {
  if (entries.length < 2) return [...entries];
  // each time parsed once, not once per comparison
  const secs = new Map(entries.map((e) => [e, e.time ? Math.floor(Date.parse(e.time) / 1000) : 0]));
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return [...entries].sort((p, q) => cmp(p.operation, q.operation) || secs.get(p)! - secs.get(q)!
    || cmp(p.manager, q.manager) || cmp(p.apiVersion, q.apiVersion) || cmp(p.subresource ?? "", q.subresource ?? ""));
}

