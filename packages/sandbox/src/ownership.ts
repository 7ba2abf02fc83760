// Field ownership of writes that are not server-side apply (POST, PUT, non-apply PATCH), as
// kube-apiserver's field manager records them: the manager (the fieldManager query, else the
// User-Agent's product) gets an `Update` entry owning what it added or changed, compared with
// the stored object (for a create, with the kind's Go zero value: fields a Go struct always has,
// such as a Deployment's spec.template, are not "added", so they carry no "." of their own);
// other managers lose what it changed, everyone loses what it removed. A later apply then
// conflicts with these managers as on the real server (apply.ts). Objects are walked by their
// kind's schema (keyed lists, sets, atomic maps): a built-in's published one, a CRD's own
// (the walk, and what it finds a write changed, are field-changes.ts).

import { clone } from "./patch.ts";
import { resolveSchema, schemaRef } from "./kube-schemas.ts";
import { collect, fieldsV1Of, isObj, sortEntries, type ManagedEntry } from "./fields-v1.ts";
import { changesOf, type WriteScope } from "./field-changes.ts";

/** the "before" metadata of a custom resource's create: a non-leaf node with no fields */
const CREATED_METADATA = Object.freeze({ name: "" });

/**
 * who writes: the manager, and the subresource its entry names when not the one written (/scale writes the main
 * object)
 */
export interface Writer { manager: string; subresource?: string }

/** a write's manager and when, and what field-changes.ts walks (its `schema`'s Go zero value is a create's "before") */
export interface UpdateRequest extends WriteScope {
  manager: string; apiVersion: string; now: string;
}

/** the User-Agent's product, as kube-apiserver names a manager that gave no fieldManager */
export function managerFromUserAgent(userAgent: string | null): string {
  const product = (userAgent ?? "").split("/")[0] ?? "";
  return [...product].filter((c) => c >= " " && c !== "\u007f").join("").slice(0, 128);
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
/**
 * zeroOf a built-in kind by its schema name, computed once (read only: field-changes.ts copies before it changes
 * anything)
 */
function zeroOfKind(schema: string | undefined): any {
  if (schema === undefined) return {};
  if (!zeros.has(schema)) zeros.set(schema, zeroOf(schemaRef(schema)));
  return zeros.get(schema);
}

/** the managedFields after a write of `next` over `old` (undefined: a create) by `req.manager` */
export function recordUpdate(old: any | undefined, next: any, req: UpdateRequest): ManagedEntry[] {
  // read only: every entry returned is a new object
  const entries: ManagedEntry[] = next.metadata?.managedFields ?? old?.metadata?.managedFields ?? [];
  // a custom resource's create starts from an object with metadata (no Go zero value to take it from)
  const createOfCustom = !old && !req.schema;
  const before = old ?? (createOfCustom ? { metadata: CREATED_METADATA } : zeroOfKind(req.schema));
  const { touched, removed } = changesOf(before, next, req, createOfCustom);
  const same = (e: ManagedEntry) => e.manager === req.manager && e.operation === "Update"
    && e.apiVersion === req.apiVersion && (e.subresource ?? "") === (req.subresource ?? "");
  const out: ManagedEntry[] = [];
  let mine = new Set<string>();
  let mineBefore = 0;
  for (const e of entries) {
    const set = new Set<string>();
    const normal = collect(e.fieldsV1, "", set);
    if (same(e)) { mine = set; mineBefore = set.size; continue; }
    let lost = false;
    for (const p of touched) if (set.delete(p)) lost = true;
    for (const p of removed) if (set.delete(p)) lost = true;
    if (set.size) out.push({ ...e, fieldsV1: normal && !lost ? clone(e.fieldsV1) : fieldsV1Of(set) });
  }
  const previous = entries.find(same);
  const grown = [...touched].some((p) => !mine.has(p));
  for (const p of touched) mine.add(p);
  for (const p of removed) mine.delete(p);
  if (mine.size) {
    // the time moves only when the manager's fields change, so a no-op write stays a no-op
    const time = previous && !grown && mineBefore === mine.size ? previous.time : req.now;
    out.push({
      manager: req.manager, operation: "Update", apiVersion: req.apiVersion,
      fieldsType: "FieldsV1", fieldsV1: fieldsV1Of(mine),
      // kube-apiserver v1.37.2 records a /scale write's entry without a time
      ...(req.subresource === "scale" ? {} : { time }),
      ...(req.subresource ? { subresource: req.subresource } : {}),
    });
  }
  return sortEntries(out);
}
