// Table output (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`), what `kubectl get`
// prints: the columns kube-apiserver's printers define for the built-in kinds the sandbox
// serves (pkg/printers/internalversion), a CRD version's additionalPrinterColumns (default:
// Age), and the default Name / Created At for the rest. Each row carries the object's metadata
// as a PartialObjectMetadata, as with the server's default `includeObject=PartialObjectMetadata`.

import { jsonPathValues } from "./jsonpath.ts";
import type { PrinterColumn, ResourceDef } from "./resources.ts";

interface Column { name: string; type: string; format: string; description: string; priority: number }
type Cell = string | number | boolean | null;
interface Printer { columns: Column[]; cells: (o: any) => Cell[] }

const col = (name: string, type = "string", priority = 0, format = "", description = ""): Column =>
  ({ name, type, format, description, priority });
const NAME = col("Name", "string", 0, "name",
  "Name must be unique within a namespace. Is required when creating resources, although some resources may allow " +
    "a client to request the generation of an appropriate name automatically. Name is primarily intended for " +
    "creation idempotence and configuration definition. Cannot be updated. More info: " +
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names");
const AGE = col("Age", "string", 0, "",
  "CreationTimestamp is a timestamp representing the server time when this object was created. It is not " +
    "guaranteed to be set in happens-before order across separate operations. Clients may not set this value. " +
    "It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. " +
    "More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata");

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

function since(ts: unknown): string {
  const t = typeof ts === "string" ? Date.parse(ts) : NaN;
  return Number.isNaN(t) ? "<unknown>" : humanDuration(Date.now() - t);
}

const age = (o: any) => since(o.metadata?.creationTimestamp);
const count = (m: unknown) => (m && typeof m === "object" ? Object.keys(m).length : 0);
const subjects = (o: any, kind: string) => (o.subjects ?? []).filter((s: any) => s?.kind === kind)
  .map((s: any) => (kind === "ServiceAccount" ? `${s.namespace ?? ""}/${s.name}` : s.name)).join(", ");

function eventCells(o: any): Cell[] {
  const first = o.firstTimestamp ? since(o.firstTimestamp) : since(o.eventTime ?? o.deprecatedFirstTimestamp);
  let last = o.lastTimestamp ? since(o.lastTimestamp) : first;
  const series = o.series;
  const n = series?.count ?? o.count ?? o.deprecatedCount ?? 0;
  if (series) last = since(series.lastObservedTime);
  else if (n > 1) last = `${last} (x${n} over ${first})`;
  const involved = o.involvedObject ?? o.regarding ?? {};
  const source = o.source?.component ?? o.reportingController ?? "";
  return [last, o.type ?? "", o.reason ?? "", `${String(involved.kind ?? "").toLowerCase()}/${involved.name ?? ""}`,
    involved.fieldPath ?? "", source, o.message ?? o.note ?? "", first, n, o.metadata?.name ?? ""];
}

const EVENT: Printer = {
  columns: [
    col("Last Seen"), col("Type"), col("Reason"), col("Object"), col("Subobject", "string", 1),
    col("Source", "string", 1), col("Message"), col("First Seen", "string", 1), col("Count", "integer", 1),
    col("Name", "string", 1),
  ],
  cells: eventCells,
};
const BINDING: Printer = {
  columns: [
    NAME, col("Role"), AGE, col("Users", "string", 1), col("Groups", "string", 1), col("ServiceAccounts", "string", 1),
  ],
  cells: (o) => [
    o.metadata.name, `${o.roleRef?.kind ?? ""}/${o.roleRef?.name ?? ""}`, age(o),
    subjects(o, "User"), subjects(o, "Group"), subjects(o, "ServiceAccount"),
  ],
};
const CREATED_AT: Printer = {
  columns: [NAME, col("Created At", "date", 0, "", "")],
  cells: (o) => [o.metadata.name, o.metadata.creationTimestamp ?? null],
};

function selectorText(sel: any): string {
  const parts = Object.entries(sel?.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const e of sel?.matchExpressions ?? []) {
    parts.push(`${e.key} ${String(e.operator).toLowerCase()} (${(e.values ?? []).join(",")})`);
  }
  return parts.length ? parts.join(",") : "<none>";
}

const BUILTIN: Record<string, Printer> = {
  "/namespaces": {
    columns: [NAME, col("Status"), AGE], cells: (o) => [o.metadata.name, o.status?.phase ?? "", age(o)],
  },
  "/configmaps": {
    columns: [NAME, col("Data", "integer"), AGE],
    cells: (o) => [o.metadata.name, count(o.data) + count(o.binaryData), age(o)],
  },
  "/secrets": {
    columns: [NAME, col("Type"), col("Data", "integer"), AGE],
    cells: (o) => [o.metadata.name, o.type ?? "", count(o.data), age(o)],
  },
  "/serviceaccounts": {
    columns: [NAME, col("Secrets", "integer"), AGE], cells: (o) => [o.metadata.name, (o.secrets ?? []).length, age(o)],
  },
  "/events": EVENT,
  "/pods": {
    columns: [
      NAME, col("Ready"), col("Status"), col("Restarts", "string"), AGE, col("IP", "string", 1),
      col("Node", "string", 1),
    ],
    cells: (o) => {
      const statuses: any[] = o.status?.containerStatuses ?? [];
      const total = (o.spec?.containers ?? []).length;
      const restarts = statuses.reduce((n, c) => n + (c.restartCount ?? 0), 0);
      return [
        o.metadata.name, `${statuses.filter((c) => c.ready).length}/${total}`,
        o.status?.reason ?? o.status?.phase ?? "Pending", String(restarts), age(o),
        o.status?.podIP ?? "<none>", o.spec?.nodeName ?? "<none>",
      ];
    },
  },
  "/services": {
    columns: [
      NAME, col("Type"), col("Cluster-IP"), col("External-IP"), col("Port(s)"), AGE, col("Selector", "string", 1),
    ],
    cells: (o) => [o.metadata.name, o.spec?.type ?? "ClusterIP", o.spec?.clusterIP ?? "<none>",
      (o.spec?.externalIPs ?? []).join(",") || "<none>",
      (o.spec?.ports ?? []).map((p: any) => `${p.port}${p.nodePort ? `:${p.nodePort}` : ""}/${p.protocol ?? "TCP"}`)
        .join(",") || "<none>",
      age(o), Object.entries(o.spec?.selector ?? {}).map(([k, v]) => `${k}=${v}`).join(",") || "<none>"],
  },
  "events.k8s.io/events": EVENT,
  "coordination.k8s.io/leases": {
    columns: [NAME, col("Holder"), AGE], cells: (o) => [o.metadata.name, o.spec?.holderIdentity ?? "", age(o)],
  },
  "apps/deployments": {
    columns: [NAME, col("Ready"), col("Up-to-date", "integer"), col("Available", "integer"), AGE,
      col("Containers", "string", 1), col("Images", "string", 1), col("Selector", "string", 1)],
    cells: (o) => {
      const containers: any[] = o.spec?.template?.spec?.containers ?? [];
      return [
        o.metadata.name, `${o.status?.readyReplicas ?? 0}/${o.spec?.replicas ?? 1}`,
        o.status?.updatedReplicas ?? 0, o.status?.availableReplicas ?? 0, age(o),
        containers.map((c) => c.name).join(","), containers.map((c) => c.image).join(","),
        selectorText(o.spec?.selector),
      ];
    },
  },
  "rbac.authorization.k8s.io/clusterrolebindings": BINDING,
  "rbac.authorization.k8s.io/rolebindings": BINDING,
};

/** a CRD version's columns: Name, then its additionalPrinterColumns, or Age when it declares none */
function customPrinter(columns: PrinterColumn[] | undefined): Printer {
  const declared = columns ?? [{ name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" }];
  return {
    columns: [NAME, ...declared.map((c) => col(c.name, c.type, c.priority ?? 0, c.format ?? "", c.description ?? ""))],
    cells: (o) => [o.metadata.name, ...declared.map((c) => customCell(o, c))],
  };
}

function customCell(o: any, c: PrinterColumn): Cell {
  const values = jsonPathValues(o, c.jsonPath);
  if (!values.length) return null;
  const v = values[0];
  if (c.type === "date") return since(v);
  if (v === null || typeof v === "string" || typeof v === "number" || typeof v === "boolean") return v;
  return JSON.stringify(v);
}

function printerFor(def: ResourceDef, version: string): Printer {
  if (def.crdName) return customPrinter(def.printerColumns?.get(version));
  return BUILTIN[`${def.group}/${def.plural}`] ?? CREATED_AT;
}

/** whether the client asked for a Table first (kubectl: Table v1, Table v1beta1, then JSON) */
export function wantsTable(accept: string | null): boolean {
  for (const part of (accept ?? "").split(",")) {
    const [type, ...params] = part.split(";").map((s) => s.trim().toLowerCase());
    const p = new Map(params.map((kv) => kv.split("=") as [string, string]));
    const tableVersion = p.get("v") === "v1" || p.get("v") === "v1beta1";
    if (p.get("as") === "table" && p.get("g") === "meta.k8s.io" && tableVersion) return true;
    if (type === "application/json" || type === "*/*" || type === "application/*") return false;
  }
  return false;
}

/** the Table of stored bodies (a GET gives one row, a LIST one per item) */
export function toTable(
  def: ResourceDef, version: string, bodies: any[], listMeta: Record<string, unknown> = {}, withColumns = true,
): unknown {
  const printer = printerFor(def, version);
  return {
    kind: "Table", apiVersion: "meta.k8s.io/v1", metadata: listMeta,
    // watch events after the first carry rows only, as the real server's
    ...(withColumns ? { columnDefinitions: printer.columns } : {}),
    rows: bodies.map((o) => ({
      cells: printer.cells(o),
      object: { kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: o.metadata },
    })),
  };
}
