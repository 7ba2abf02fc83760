// kube-apiserver's lastAppliedManager and lastAppliedUpdater (k8s.io/apiserver's fieldmanager): the way from
// client-side `kubectl apply` to `kubectl apply --server-side` (field manager "kubectl") without conflicts. Such an
// apply may take the fields whose live values are still those of the kubectl.kubernetes.io/last-applied-configuration
// annotation; and an object that has the annotation keeps it set to the configuration last applied, so a later
// client-side apply computes its patch from that.

const ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration";
const MANAGER = "kubectl";

const isObj = (v: unknown): v is Record<string, any> => typeof v === "object" && v !== null && !Array.isArray(v);

/** the live object's last-applied configuration, when it may excuse conflicts of this apply */
export function lastAppliedOf(live: any, manager: string, apiVersion: string): any {
  const text = manager === MANAGER ? live?.metadata?.annotations?.[ANNOTATION] : undefined;
  if (typeof text !== "string" || !text) return undefined;
  try {
    const parsed = JSON.parse(text);
    return isObj(parsed) && parsed.apiVersion === apiVersion ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** Go's JSON encoding of a decoded object: keys sorted, HTML characters and line separators escaped */
function goMarshal(value: unknown): string {
  const sorted = (v: unknown): unknown => Array.isArray(v) ? v.map(sorted)
    : isObj(v) ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted(v[k])])) : v;
  const hex = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
  // (json.Encoder's, which ends its output with a newline)
  return `${JSON.stringify(sorted(value)).replace(/[<>&\u2028\u2029]/g, hex)}\n`;
}

/** after an apply by "kubectl": the annotation, when the object has one, is the applied configuration without it */
export function updateLastApplied(result: any, applied: any, manager: string): void {
  const annotations = result?.metadata?.annotations;
  if (manager !== MANAGER || !isObj(annotations) || !annotations[ANNOTATION]) return;
  const { [ANNOTATION]: _, ...rest } = isObj(applied.metadata?.annotations) ? applied.metadata.annotations : {};
  const metadata = { ...(applied.metadata ?? {}) };
  // an unstructured object's SetAnnotations(nil) drops the field; an emptied map stays
  if (isObj(applied.metadata?.annotations)) metadata.annotations = rest; else delete metadata.annotations;
  const value = goMarshal({ ...applied, ...(applied.metadata ? { metadata } : {}) });
  // a copy: the merged object may share its annotations with the live one
  result.metadata.annotations = { ...annotations, [ANNOTATION]: value };
}
