// Request bodies in `application/vnd.kubernetes.protobuf`, which client-go's typed clients
// (so `kubectl create namespace|configmap|secret|deployment`, `kubectl auth can-i`) send for
// built-in kinds, and never retry as JSON. The envelope is the magic "k8s\0" and a
// runtime.Unknown (apiVersion, kind, raw); `raw` is decoded with protobufjs and the vendored
// descriptor of Kubernetes' generated.proto files (kube-protos.json: regenerate it with
// `bun test/cluster/gen-proto.ts`), then turned into the object's JSON form.
//
// Go's protobuf encoding writes every non-pointer field, even when empty, where its JSON drops
// them (omitempty): empty strings, zero numbers, false, empty lists and maps and zero times are
// dropped here, so a decoded body reads like the JSON kubectl would have sent. The wire cannot
// tell a pointer set to zero from an empty non-pointer, so the pointer fields whose zero means
// something (`replicas: 0`, `defaultMode: 0`...) are named in POINTER_ZEROES and kept.

import protobuf from "protobufjs/light.js";
import descriptor from "./kube-protos.json" with { type: "json" };
import { errors } from "./status.ts";

export const PROTOBUF = "application/vnd.kubernetes.protobuf";
export const MAGIC = [0x6b, 0x38, 0x73, 0x00];
const META = "k8s.io.apimachinery.pkg.apis.meta.v1";

let root: protobuf.Root | undefined;
export function types(): protobuf.Root {
  return (root ??= protobuf.Root.fromJSON(descriptor as protobuf.INamespace));
}

/**
 * the proto message of an apiVersion/kind: `apps/v1` → k8s.io.api.apps.v1, `rbac.authorization.k8s.io/v1` →
 * k8s.io.api.rbac.v1
 */
export function messageName(apiVersion: string, kind: string): string {
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") as [string, string] : ["", apiVersion];
  if (kind === "DeleteOptions" || group === "meta.k8s.io") return `${META}.${kind}`;
  const pkg = group === "" ? "core" : group.replace(/\.k8s\.io$/, "").split(".")[0];
  return `k8s.io.api.${pkg}.${version}.${kind}`;
}

/** a protobuf request body as the JSON object it stands for; 415 for a kind the sandbox has no schema of */
export function decodeProtobufBody(bytes: Uint8Array): any {
  if (bytes.length < 4 || MAGIC.some((b, i) => bytes[i] !== b)) {
    throw errors.badRequest('the body of the request is not a Kubernetes protobuf message (no "k8s\\x00" prefix)');
  }
  let apiVersion = "";
  let kind = "";
  try {
    const unknown = types().lookupType("k8s.io.apimachinery.pkg.runtime.Unknown").decode(bytes.subarray(4)) as any;
    apiVersion = unknown.typeMeta?.apiVersion ?? "";
    kind = unknown.typeMeta?.kind ?? "";
    const type = types().lookup(messageName(apiVersion, kind));
    if (!(type instanceof protobuf.Type)) throw errors.unsupportedMediaType(`${PROTOBUF} of ${apiVersion}/${kind}`);
    const body = toJson(type, type.decode(unknown.raw ?? new Uint8Array()));
    return { apiVersion, kind, ...(body as object) };
  } catch (e) {
    if ((e as { code?: number }).code === 415) throw e;
    throw errors.badRequest(
      `the body of the request could not be decoded as protobuf (${apiVersion}/${kind}): ${(e as Error).message}`,
    );
  }
}

/** *int32 / *int64 / *bool fields of the served kinds whose zero (or false) is a meaningful value */
const POINTER_ZEROES = new Set([
  "replicas", "minReplicas", "parallelism", "completions", "backoffLimit", "suspend", "immutable", "defaultMode",
  "mode", "terminationGracePeriodSeconds", "activeDeadlineSeconds", "runAsUser", "runAsGroup", "fsGroup",
  "runAsNonRoot", "privileged", "allowPrivilegeEscalation", "readOnlyRootFilesystem", "automountServiceAccountToken",
  "hostUsers", "ttlSecondsAfterFinished", "startingDeadlineSeconds", "successfulJobsHistoryLimit",
  "failedJobsHistoryLimit", "revisionHistoryLimit", "progressDeadlineSeconds", "expirationSeconds",
  "gracePeriodSeconds", "optional", "priority",
]);

/** what Go's JSON would leave out (empty objects stay: Go keeps struct fields that are not pointers) */
function empty(name: string, v: unknown): boolean {
  if ((v === 0 || v === false) && POINTER_ZEROES.has(name)) return false;
  return v === undefined || v === null || v === "" || v === 0 || v === false || (Array.isArray(v) && v.length === 0);
}

function rfc3339(seconds: number, nanos: number, digits: number): string {
  const iso = new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, "");
  const frac = digits ? `.${String(Math.floor(nanos / 10 ** (9 - digits))).padStart(digits, "0")}` : "";
  return `${iso}${frac}Z`;
}

const num = (v: unknown) =>
  typeof v === "object" && v !== null && "toNumber" in v ? (v as { toNumber(): number }).toNumber() : Number(v ?? 0);

/** the JSON form of well-known apimachinery messages, or undefined for ordinary ones */
function special(type: protobuf.Type, m: any): { value: unknown } | undefined {
  switch (type.fullName.slice(1)) {
    case `${META}.Time`:
      return num(m.seconds) === 0 && !m.nanos ? { value: undefined } : { value: rfc3339(num(m.seconds), 0, 0) };
    case `${META}.MicroTime`:
      if (num(m.seconds) === 0 && !m.nanos) return { value: undefined };
      return { value: rfc3339(num(m.seconds), m.nanos ?? 0, 6) };
    case `${META}.Duration`:
      return { value: `${num(m.duration) / 1e9}s` };
    case `${META}.FieldsV1`:
    case "k8s.io.apimachinery.pkg.runtime.RawExtension":
      if (!m.Raw?.length && !m.raw?.length) return { value: undefined };
      return { value: JSON.parse(new TextDecoder().decode(m.Raw ?? m.raw)) };
    case "k8s.io.apimachinery.pkg.api.resource.Quantity":
      return { value: m.string };
    case "k8s.io.apimachinery.pkg.util.intstr.IntOrString":
      return { value: num(m.type) === 1 ? m.strVal ?? "" : num(m.intVal) };
    default:
      return undefined;
  }
}

function fieldValue(field: protobuf.Field, v: unknown): unknown {
  const t = field.resolvedType;
  if (t instanceof protobuf.Type) return toJson(t, v);
  if (v instanceof Uint8Array) return Buffer.from(v).toString("base64");
  if (typeof v === "object" && v !== null && "toNumber" in v) return num(v);
  return v;
}

/**
 * Embedded Go structs (`json:""` in k8s.io/api's types.go) are one message field on the wire and
 * their fields inlined in JSON: a Volume's source, a Probe's handler, a LocalObjectReference's name, an
 * IngressRule's value.
 */
const INLINE = new Set([
  "Volume.volumeSource", "Probe.handler", "EphemeralContainer.ephemeralContainerCommon", "*.localObjectReference",
  "IngressRule.ingressRuleValue",
]);
export const inlined = (type: protobuf.Type, field: string) =>
  INLINE.has(`${type.name}.${field}`) || INLINE.has(`*.${field}`);

function toJson(type: protobuf.Type, m: any): unknown {
  const s = special(type, m);
  if (s) return s.value;
  const out: Record<string, unknown> = {};
  for (const field of type.fieldsArray) {
    const v = m[field.name];
    if (v === undefined || v === null) continue;
    let value: unknown;
    if (field.map) {
      const entries = Object.entries(v as Record<string, unknown>);
      if (!entries.length) continue;
      value = Object.fromEntries(entries.map(([k, x]) => [k, fieldValue(field, x)]));
    } else if (field.repeated) {
      value = (v as unknown[]).map((x) => fieldValue(field, x));
    } else value = fieldValue(field, v);
    // an own property was on the wire; the rest are protobufjs' prototype defaults
    if (!Object.hasOwn(m, field.name)) continue;
    if (inlined(type, field.name) && typeof value === "object" && value !== null) Object.assign(out, value);
    else if (!empty(field.name, value)) out[field.name] = value;
  }
  return out;
}
