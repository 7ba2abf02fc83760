// The Table printers of the built-in kinds that are not workloads, as kube-apiserver's
// (pkg/printers/internalversion/printers.go; the CRDs' from apiextensions-apiserver's
// tableconvertor): their columns (name, type, format, priority) and cells.

import {
  AGE, age, col, count, CREATED_AT, labelText, NAME, since, wide, type Cell, type Printer,
} from "./table-columns.ts";

const firstNonEmpty = (...values: unknown[]): string =>
  (values.find((v) => typeof v === "string" && v.length > 0) as string | undefined) ?? "";

/**
 * An Event as the internal one printEvent reads: events.k8s.io/v1's fields are mapped onto
 * core/v1's (regarding → involvedObject, note → message, deprecated* → the legacy ones).
 */
function internalEvent(o: any): any {
  if (!o.regarding && !o.note && o.deprecatedCount === undefined) return o;
  return {
    ...o, involvedObject: o.regarding ?? {}, message: o.note, source: o.deprecatedSource ?? {},
    firstTimestamp: o.deprecatedFirstTimestamp, lastTimestamp: o.deprecatedLastTimestamp, count: o.deprecatedCount,
  };
}

function eventCells(event: any): Cell[] {
  const o = internalEvent(event);
  const first = o.firstTimestamp ? since(o.firstTimestamp) : since(o.eventTime);
  let last = o.lastTimestamp ? since(o.lastTimestamp) : first;
  let n: number = o.count ?? 0;
  if (o.series) {
    last = since(o.series.lastObservedTime);
    n = o.series.count ?? 0;
  } else if (n === 0) {
    n = 1; // singleton events of the new API carry no count
  }
  const involved = o.involvedObject ?? {};
  const kind = String(involved.kind ?? "").toLowerCase();
  const target = involved.name ? `${kind}/${involved.name}` : kind;
  const component = firstNonEmpty(o.source?.component, o.reportingController);
  const instance = firstNonEmpty(o.source?.host, o.reportingInstance);
  const source = instance ? `${component}, ${instance}` : component;
  return [last, o.type ?? "", o.reason ?? "", target, involved.fieldPath ?? "", source, o.message ?? "", first, n,
    o.metadata?.name ?? ""];
}

const EVENT: Printer = {
  columns: [
    col("Last Seen"), col("Type"), col("Reason"), col("Object"), wide("Subobject"), wide("Source"), col("Message"),
    wide("First Seen"), wide("Count"), { ...NAME, priority: 1 },
  ],
  cells: eventCells,
};

const subjects = (o: any, kind: string) => (o.subjects ?? []).filter((s: any) => s?.kind === kind)
  .map((s: any) => (kind === "ServiceAccount" ? `${s.namespace ?? ""}/${s.name}` : s.name)).join(", ");

const BINDING: Printer = {
  columns: [NAME, col("Role"), AGE, wide("Users"), wide("Groups"), wide("ServiceAccounts")],
  cells: (o) => [
    o.metadata.name, `${o.roleRef?.kind ?? ""}/${o.roleRef?.name ?? ""}`, age(o),
    subjects(o, "User"), subjects(o, "Group"), subjects(o, "ServiceAccount"),
  ],
};

const WEBHOOKS: Printer = {
  columns: [NAME, col("Webhooks", "integer"), AGE],
  cells: (o) => [o.metadata.name, (o.webhooks ?? []).length, age(o)],
};

/** getServiceExternalIP: what each type of Service is reached at from outside */
function externalIP(o: any): string {
  const spec = o.spec ?? {};
  const external: string[] = spec.externalIPs ?? [];
  switch (spec.type ?? "ClusterIP") {
    case "ClusterIP":
    case "NodePort":
      return external.length ? external.join(",") : "<none>";
    case "LoadBalancer": {
      const ingress: any[] = o.status?.loadBalancer?.ingress ?? [];
      const found = [...new Set(ingress.map((i) => i.ip || i.hostname).filter(Boolean))].sort();
      const all = [...found, ...external];
      if (all.length) return external.length ? all.join(",") : clipped(found.join(","));
      return "<pending>";
    }
    case "ExternalName":
      return spec.externalName ?? "";
    default:
      return "<unknown>";
  }
}

const clipped = (s: string) => (s.length > 16 ? `${s.slice(0, 13)}...` : s);

const SERVICE: Printer = {
  columns: [NAME, col("Type"), col("Cluster-IP"), col("External-IP"), col("Port(s)"), AGE, wide("Selector")],
  cells: (o) => {
    const ports = (o.spec?.ports ?? [])
      .map((p: any) => (p.nodePort > 0 ? `${p.port}:${p.nodePort}/${p.protocol}` : `${p.port}/${p.protocol}`))
      .join(",");
    return [o.metadata.name, o.spec?.type ?? "", o.spec?.clusterIPs?.[0] ?? "<none>", externalIP(o), ports || "<none>",
      age(o), labelText(o.spec?.selector)];
  },
};

const CRD: Printer = {
  columns: [NAME, col("Scope"), col("Versions"), CREATED_AT, wide("Group"), wide("Kind"), wide("ShortNames"),
    wide("Established", "boolean")],
  cells: (o) => {
    const versions = (o.spec?.versions ?? []).filter((v: any) => v.served)
      .map((v: any) => (v.storage ? `${v.name}(storage)` : v.name)).sort();
    const established = (o.status?.conditions ?? []).some((c: any) => c.type === "Established" && c.status === "True");
    return [o.metadata.name, o.spec?.scope ?? "", versions.join(","), o.metadata.creationTimestamp ?? null,
      o.spec?.group ?? "", o.spec?.names?.kind ?? "", (o.spec?.names?.shortNames ?? []).join(","), established];
  },
};

/** The printers of the built-in kinds that are not workloads, by `group/plural`. */
export const CORE_PRINTERS: Record<string, Printer> = {
  "/namespaces": {
    columns: [NAME, col("Status"), AGE], cells: (o) => [o.metadata.name, o.status?.phase ?? "", age(o)],
  },
  "/configmaps": {
    columns: [NAME, col("Data"), AGE], cells: (o) => [o.metadata.name, count(o.data) + count(o.binaryData), age(o)],
  },
  "/secrets": {
    columns: [NAME, col("Type"), col("Data"), AGE],
    cells: (o) => [o.metadata.name, o.type ?? "", count(o.data), age(o)],
  },
  "/serviceaccounts": { columns: [NAME, AGE], cells: (o) => [o.metadata.name, age(o)] },
  "/events": EVENT,
  "events.k8s.io/events": EVENT,
  "/services": SERVICE,
  "coordination.k8s.io/leases": {
    columns: [NAME, col("Holder"), AGE], cells: (o) => [o.metadata.name, o.spec?.holderIdentity ?? "", age(o)],
  },
  "rbac.authorization.k8s.io/clusterrolebindings": BINDING,
  "rbac.authorization.k8s.io/rolebindings": BINDING,
  "admissionregistration.k8s.io/validatingwebhookconfigurations": WEBHOOKS,
  "admissionregistration.k8s.io/mutatingwebhookconfigurations": WEBHOOKS,
  "apiextensions.k8s.io/customresourcedefinitions": CRD,
};
