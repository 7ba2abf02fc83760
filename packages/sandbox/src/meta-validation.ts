// ObjectMeta as kube-apiserver validates it on every create and update, before the kind's own
// rules: label keys and values, annotation keys (their total size is limits.ts's), owner
// references' required fields, and finalizers (qualified names; a built-in kind's must be a
// standard one or fully qualified, a custom resource's unqualified one only warns; never both
// "orphan" and "foregroundDeletion"). Each fault is its own cause, worded as there.

import { labelValueErrors, qualifiedNameErrors } from "./label-selector.ts";
import type { ResourceDef } from "./resources.ts";
import type { Cause } from "./schema.ts";
import { addWarning } from "./warnings.ts";

const isObj = (v: unknown): v is Record<string, any> => typeof v === "object" && v !== null && !Array.isArray(v);
const invalid = (field: string, value: unknown, detail: string): Cause =>
  ({ reason: "FieldValueInvalid", message: `Invalid value: ${JSON.stringify(value)}: ${detail}`, field });
const STANDARD_FINALIZERS = new Set(["kubernetes", "orphan", "foregroundDeletion"]);

function labelCauses(labels: unknown): Cause[] {
  const out: Cause[] = [];
  for (const [key, value] of Object.entries(isObj(labels) ? labels : {})) {
    for (const e of qualifiedNameErrors(key)) out.push(invalid("metadata.labels", key, e));
    for (const e of labelValueErrors(String(value ?? ""))) out.push(invalid("metadata.labels", String(value ?? ""), e));
  }
  return out;
}

function annotationCauses(annotations: unknown): Cause[] {
  const out: Cause[] = [];
  // a QualifiedName but that case does not matter
  for (const key of Object.keys(isObj(annotations) ? annotations : {})) {
    for (const e of qualifiedNameErrors(key.toLowerCase())) out.push(invalid("metadata.annotations", key, e));
  }
  return out;
}

/** an owner reference as the real server's JSON writes it (its fields in Go order, the pointers only when set) */
function goOwnerRef(ref: any): Record<string, unknown> {
  const r = isObj(ref) ? ref : {};
  const out: Record<string, unknown> = { apiVersion: r.apiVersion ?? "", kind: r.kind ?? "", name: r.name ?? "",
    uid: r.uid ?? "" };
  for (const pointer of ["controller", "blockOwnerDeletion"]) {
    if (r[pointer] !== undefined && r[pointer] !== null) out[pointer] = r[pointer];
  }
  return out;
}

/**
 * ValidateOwnerReferences: each reference's required fields, and at most one controller (each further one is a
 * cause naming the first and itself, its value the whole list).
 */
function ownerCauses(refs: unknown): Cause[] {
  const out: Cause[] = [];
  const list: any[] = Array.isArray(refs) ? refs : [];
  let firstController = "";
  list.forEach((ref: any, i: number) => {
    const version = String(ref?.apiVersion ?? "").split("/").pop();
    const missing = { apiVersion: !version, kind: !ref?.kind, name: !ref?.name, uid: !ref?.uid };
    for (const [field, absent] of Object.entries(missing)) {
      if (absent) {
        out.push({ reason: "FieldValueRequired", message: "Required value: must not be empty",
          field: `metadata.ownerReferences[${i}].${field}` });
      }
    }
    if (ref?.controller !== true) return;
    const current = `${ref.kind ?? ""}/${ref.name ?? ""}`;
    if (!firstController) { firstController = current; return; }
    out.push(invalid("metadata.ownerReferences", list.map(goOwnerRef), "Only one reference can have Controller set "
      + `to true. Found "true" in references for ${firstController} and ${current}`));
  });
  return out;
}

function finalizerCauses(def: ResourceDef, finalizers: unknown): Cause[] {
  const list: string[] = Array.isArray(finalizers) ? finalizers.map(String) : [];
  const out: Cause[] = [];
  for (const f of list) for (const e of qualifiedNameErrors(f)) out.push(invalid("metadata.finalizers", f, e));
  if (list.includes("orphan") && list.includes("foregroundDeletion")) {
    out.push(invalid("metadata.finalizers", list, "finalizer orphan and foregroundDeletion cannot be both set"));
  }
  list.forEach((f, i) => {
    if (f.includes("/") || STANDARD_FINALIZERS.has(f) || qualifiedNameErrors(f).length) return;
    if (def.crdName) {
      addWarning(`metadata.finalizers: ${JSON.stringify(f)}: prefer a domain-qualified finalizer name to avoid ` +
        "accidental conflicts with other finalizer writers");
    } else {
      out.push(invalid(`metadata.finalizers[${i}]`, f, "name is neither a standard finalizer name nor is it fully " +
        "qualified"));
    }
  });
  return out;
}

/**
 * The causes a body's metadata fails with, in the real server's order. A custom resource's update
 * validates the metadata three times over (the generic checks and the CRD's): its label, annotation
 * and owner causes appear thrice, its finalizers' once.
 */
export function metadataCauses(def: ResourceDef, body: any, updating: boolean): Cause[] {
  const meta = isObj(body?.metadata) ? body.metadata : {};
  const times = def.crdName && updating ? 3 : 1;
  const repeated = [
    ...labelCauses(meta.labels), ...annotationCauses(meta.annotations), ...ownerCauses(meta.ownerReferences),
  ];
  return [...Array.from({ length: times }, () => repeated).flat(), ...finalizerCauses(def, meta.finalizers)];
}
