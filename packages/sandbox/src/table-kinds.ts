// The Table printers of PersistentVolumeClaims, Ingresses, PodDisruptionBudgets and NetworkPolicies, as
// kube-apiserver's (pkg/printers/internalversion/printers.go): their columns and cells.

import { AGE, age, col, NAME, selectorText, wide, type Cell, type Printer } from "./table-columns.ts";

/** helper.GetAccessModesAsString: each mode once, in this order */
const MODES: [string, string][] = [
  ["ReadWriteOnce", "RWO"], ["ReadOnlyMany", "ROX"], ["ReadWriteMany", "RWX"], ["ReadWriteOncePod", "RWOP"],
];

function claimCells(o: any): Cell[] {
  const spec = o.spec ?? {};
  const bound = Boolean(spec.volumeName);
  const modes: unknown[] = o.status?.accessModes ?? [];
  return [
    o.metadata.name, o.metadata.deletionTimestamp ? "Terminating" : o.status?.phase ?? "", spec.volumeName ?? "",
    // capacity and modes are the bound volume's, shown only once bound
    bound ? String(o.status?.capacity?.storage ?? "0") : "",
    bound ? MODES.filter(([m]) => modes.includes(m)).map(([, s]) => s).join(",") : "",
    o.metadata.annotations?.["volume.beta.kubernetes.io/storage-class"] ?? spec.storageClassName ?? "",
    spec.volumeAttributesClassName ?? "<unset>", age(o), spec.volumeMode ?? "<unset>",
  ];
}

/** formatHosts: the first three rules' hosts, "*" for none */
function ingressHosts(rules: any[]): string {
  const hosts = rules.slice(0, 3).map((r) => r?.host).filter((h) => typeof h === "string" && h);
  if (!hosts.length) return "*";
  return rules.length > 3 ? `${hosts.join(",")} + ${rules.length - 3} more...` : hosts.join(",");
}

/** ingressLoadBalancerStatusStringer: each address once, sorted (the server prints wide: never clipped) */
function ingressAddress(o: any): string {
  const found = (o.status?.loadBalancer?.ingress ?? []).map((i: any) => i?.ip || i?.hostname).filter(Boolean);
  return [...new Set<string>(found)].sort().join(",");
}

const intOrString = (v: unknown): string => (v === undefined || v === null ? "N/A" : String(v));

/** The printers of these kinds, by `group/plural`. */
export const KIND_PRINTERS: Record<string, Printer> = {
  "/persistentvolumeclaims": {
    columns: [NAME, col("Status"), col("Volume"), col("Capacity"), col("Access Modes"), col("StorageClass"),
      col("VolumeAttributesClass"), AGE, wide("VolumeMode")],
    cells: claimCells,
  },
  "networking.k8s.io/ingresses": {
    columns: [NAME, col("Class"), col("Hosts"), col("Address"), col("Ports"), AGE],
    cells: (o) => [o.metadata.name, o.spec?.ingressClassName ?? "<none>", ingressHosts(o.spec?.rules ?? []),
      ingressAddress(o), (o.spec?.tls ?? []).length ? "80, 443" : "80", age(o)],
  },
  "policy/poddisruptionbudgets": {
    columns: [NAME, col("Min Available"), col("Max Unavailable"), col("Allowed Disruptions", "integer"), AGE],
    cells: (o) => [o.metadata.name, intOrString(o.spec?.minAvailable), intOrString(o.spec?.maxUnavailable),
      o.status?.disruptionsAllowed ?? 0, age(o)],
  },
  "networking.k8s.io/networkpolicies": {
    columns: [NAME, col("Pod-Selector"), AGE],
    cells: (o) => [o.metadata.name, selectorText(o.spec?.podSelector), age(o)],
  },
};
