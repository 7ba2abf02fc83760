// The pieces every Table printer is made of (table.ts and its printers): a column definition,
// the Name and Age columns kube-apiserver gives most kinds, ages as kubectl reads them, and
// label and selector text as apimachinery formats them.

export interface Column { name: string; type: string; format: string; description: string; priority: number }
export type Cell = string | number | boolean | null;
export interface Printer { columns: Column[]; cells: (o: any) => Cell[] }

export const col = (name: string, type = "string", priority = 0, format = "", description = ""): Column =>
  ({ name, type, format, description, priority });
/** a wide column (`kubectl get -o wide`), priority 1 */
export const wide = (name: string, type = "string"): Column => col(name, type, 1);

const CREATION = "CreationTimestamp is a timestamp representing the server time when this object was created. It is " +
  "not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. " +
  "It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. " +
  "More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
export const NAME = col("Name", "string", 0, "name",
  "Name must be unique within a namespace. Is required when creating resources, although some resources may allow " +
    "a client to request the generation of an appropriate name automatically. Name is primarily intended for " +
    "creation idempotence and configuration definition. Cannot be updated. More info: " +
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names");
export const AGE = col("Age", "string", 0, "", CREATION);
export const CREATED_AT = col("Created At", "date", 0, "", CREATION);

/** kube's duration.HumanDuration, as the AGE column shows it */
export function humanDuration(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 0) return "0s";
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 8) return m % 60 === 0 ? `${h}h` : `${h}h${m % 60}m`;
  if (h < 48) return `${h}h`;
  const d = Math.floor(h / 24);
  if (h < 24 * 8) return h % 24 === 0 ? `${d}d` : `${d}d${h % 24}h`;
  if (d < 365 * 2) return `${d}d`;
  return `${Math.floor(d / 365)}y`;
}

const parsed = (ts: unknown) => (typeof ts === "string" && ts ? Date.parse(ts) : NaN);

/** the time since `ts`, or <unknown> without one (translateTimestampSince) */
export function since(ts: unknown): string {
  const t = parsed(ts);
  return Number.isNaN(t) ? "<unknown>" : humanDuration(Date.now() - t);
}

/** the time from `from` to `to`, both set */
export function between(from: unknown, to: unknown): string {
  return humanDuration(parsed(to) - parsed(from));
}

export const age = (o: any): string => since(o.metadata?.creationTimestamp);
export const count = (m: unknown): number => (m && typeof m === "object" ? Object.keys(m).length : 0);

/** labels.FormatLabels: `k=v` sorted by key, comma-joined; <none> when empty */
export function labelText(labels: unknown): string {
  const entries = Object.entries(labels && typeof labels === "object" ? labels : {})
    .sort(([a], [b]) => (a < b ? -1 : 1));
  return entries.length ? entries.map(([k, v]) => `${k}=${v}`).join(",") : "<none>";
}

/** a label selector as labels.Selector's String() writes it: requirements sorted by key; "" for none */
export function selectorString(sel: any): string {
  const parts: [string, string][] = Object.entries(sel?.matchLabels ?? {}).map(([k, v]) => [k, `${k}=${v}`]);
  for (const e of sel?.matchExpressions ?? []) {
    const op = String(e.operator);
    const values = [...(e.values ?? [])].sort().join(",");
    const text = op === "Exists" ? e.key
      : op === "DoesNotExist" ? `!${e.key}` : `${e.key} ${op.toLowerCase()} (${values})`;
    parts.push([e.key, text]);
  }
  return parts.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, text]) => text).join(",");
}

/** metav1.FormatLabelSelector: the selector's text, <none> when it selects by nothing */
export const selectorText = (sel: any): string => selectorString(sel) || "<none>";

/** a pod template's container names and images, comma-joined (layoutContainerCells) */
export function containerCells(template: any): [string, string] {
  const containers: any[] = template?.spec?.containers ?? [];
  return [containers.map((c) => c.name).join(","), containers.map((c) => c.image).join(",")];
}
