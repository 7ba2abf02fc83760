// Table output (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`), what `kubectl get`
// prints: the columns kube-apiserver's printers define for the built-in kinds the sandbox
// serves (pkg/printers/internalversion), a CRD version's additionalPrinterColumns (default:
// Age), and the default Name / Created At for the rest. Each row carries the object's metadata
// as a PartialObjectMetadata, as with the server's default `includeObject=PartialObjectMetadata`.

import { jsonPathValues } from "./jsonpath.ts";
import type { PrinterColumn, ResourceDef } from "./resources.ts";
import { col, CREATED_AT as CREATED_AT_COLUMN, NAME, since, type Cell, type Printer } from "./table-columns.ts";
import { CORE_PRINTERS } from "./table-core.ts";
import { KIND_PRINTERS } from "./table-kinds.ts";
import { WORKLOAD_PRINTERS } from "./table-workloads.ts";

export { humanDuration } from "./table-columns.ts";

const BUILTIN: Record<string, Printer> = { ...CORE_PRINTERS, ...WORKLOAD_PRINTERS, ...KIND_PRINTERS };
/** kinds kube-apiserver has no printer for (Roles, ClusterRoles): the default table */
const CREATED_AT: Printer = {
  columns: [NAME, CREATED_AT_COLUMN],
  cells: (o) => [o.metadata.name, o.metadata.creationTimestamp ?? null],
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
