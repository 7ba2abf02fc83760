// FieldsV1, the encoding of managedFields: a tree of "f:field", "k:{key}", "v:value" and "i:index"
// nodes, "." marking a member that also has children. The field manager works on sets of paths
// (the nodes' names joined by SEP); this file turns one into the other, and orders the entries as
// kube-apiserver does. Used by both kinds of writes: updates (ownership.ts) and applies (apply.ts).

/** One manager's record in `metadata.managedFields`: what it owns (its FieldsV1 tree), by which operation. */
export interface ManagedEntry {
  manager: string;
  operation: string;
  apiVersion: string;
  time?: string;
  fieldsType: "FieldsV1";
  fieldsV1: Record<string, any>;
  subresource?: string;
}

export const isObj = (v: unknown): v is Record<string, any> => typeof v === "object" && v !== null && !Array.isArray(v);
export const SEP = "\u0000";
/** the metadata fields no manager owns: they are the server's, or name the object */
export const IDENTITY = new Set([
  "name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp", "managedFields",
  "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink",
]);
// paths are built as joined strings ("" is the root) so a write allocates no array per node
export const under = (path: string, k: string) => (path ? path + SEP + k : k);

export function setOf(fields: Record<string, any>, prefix = "", out = new Set<string>()): Set<string> {
  collect(fields, prefix, out);
  return out;
}

/**
 * setOf's walk, telling also whether `fields` is as fieldsV1Of would build it from its set
 * (each "." first and {}, beside children; every leaf {}): such an entry that loses no field
 * is copied as it is, not rebuilt.
 */
export function collect(fields: Record<string, any>, prefix: string, out: Set<string>): boolean {
  let normal = true;
  let first = true;
  let dot = false;
  let children = 0;
  for (const k in fields) {
    const v = fields[k];
    if (k === ".") {
      out.add(prefix);
      dot = true;
      if (!first || !isObj(v) || !isEmpty(v)) normal = false;
      first = false;
      continue;
    }
    first = false;
    children++;
    const p = under(prefix, k);
    if (!isObj(v)) { out.add(p); normal = false; }
    else if (isEmpty(v)) out.add(p);
    else if (!collect(v, p, out)) normal = false;
  }
  // a lone "." becomes a leaf, and a root "." a "" key: both rebuilt differently
  return normal && !(dot && (children === 0 || prefix === ""));
}

function isEmpty(v: object): boolean {
  for (const _ in v) return false;
  return true;
}

export function fieldsV1Of(set: Set<string>): Record<string, any> {
  const root: Record<string, any> = {};
  // a member that also has children is marked by "." (".": {} first, as the real server orders
  // it): every member's node starts with one, taken off again where no child came
  const members: Record<string, any>[] = [];
  const nodes = new Map<string, Record<string, any>>();
  // a node is made after its parent, so nodes come in the order members first need them
  const nodeAt = (path: string): Record<string, any> => {
    let node = nodes.get(path);
    if (node) return node;
    const cut = path.lastIndexOf(SEP);
    const parent = cut < 0 ? root : nodeAt(path.slice(0, cut));
    const member = set.has(path);
    node = parent[cut < 0 ? path : path.slice(cut + 1)] = member ? { ".": {} } : {};
    if (member) members.push(node);
    nodes.set(path, node);
    return node;
  };
  for (const member of set) nodeAt(member);
  for (const node of members) if (onlyDot(node)) delete node["."];
  return root;
}

const onlyDot = (node: Record<string, any>) => {
  let n = 0;
  for (const _ in node) if (++n > 1) return false;
  return n === 1;
};

/** kube-apiserver's order: operation (Apply first), time to the second, manager, apiVersion, subresource */
export function sortEntries(entries: ManagedEntry[]): ManagedEntry[] {
  if (entries.length < 2) return [...entries];
  // each time parsed once, not once per comparison
  const secs = new Map(entries.map((e) => [e, e.time ? Math.floor(Date.parse(e.time) / 1000) : 0]));
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return [...entries].sort((p, q) => cmp(p.operation, q.operation) || secs.get(p)! - secs.get(q)!
    || cmp(p.manager, q.manager) || cmp(p.apiVersion, q.apiVersion) || cmp(p.subresource ?? "", q.subresource ?? ""));
}

