// A create's name, as kube-apiserver makes and checks it: generateName's prefix cut to 58 characters and five
// random ones added (names.SimpleNameGenerator), then ValidateObjectMeta's name rules (a Namespace's a DNS-1123 label,
// the other kinds' a DNS-1123 subdomain), generateName checked as a prefix first, every cause in one 422.

import type { ResourceDef } from "./resources.ts";
import { invalidError, type Cause } from "./schema.ts";

const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const GEN_ALPHABET = "bcdfghjklmnpqrstvwxz2456789";
/** a generated name fits a DNS-1123 label: 63 characters, the last five random */
const PREFIX_LENGTH = 58;

const SUBDOMAIN_RULE = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
  + "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
  + "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_RULE = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
  + "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
  + "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

/** a create's name: metadata.name, else generateName and a random suffix; refused (422) as the real server does */
export function requestedName(def: ResourceDef, meta: any): string {
  let name: string = meta.name ?? "";
  const prefix: string = typeof meta.generateName === "string" ? meta.generateName : "";
  if (!name && prefix) {
    let suffix = "";
    for (let i = 0; i < 5; i++) suffix += GEN_ALPHABET[Math.floor(Math.random() * GEN_ALPHABET.length)];
    name = `${prefix.slice(0, PREFIX_LENGTH)}${suffix}`;
  }
  if (!name) {
    const required = "Required value: name or generateName is required";
    const cause = { reason: "FieldValueRequired", message: required, field: "metadata.name" };
    throw invalidError(def.group, def.kind, "", [cause]);
  }
  const label = def.plural === "namespaces" && !def.group;
  // a prefix may end in '-' (it is masked before the check), and is said as it was sent
  const causes = [
    ...(prefix ? nameCauses("metadata.generateName", prefix, prefix.replace(/-$/, "a"), label) : []),
    ...nameCauses("metadata.name", name, name, label),
  ];
  if (causes.length) throw invalidError(def.group, def.kind, name, causes);
  return name;
}

function nameCauses(field: string, said: string, checked: string, label: boolean): Cause[] {
  const max = label ? 63 : 253;
  const why = [
    ...(checked.length > max ? [`must be no more than ${max} characters`] : []),
    ...((label ? LABEL : SUBDOMAIN).test(checked) ? [] : [label ? LABEL_RULE : SUBDOMAIN_RULE]),
  ];
  const invalid = (w: string) => `Invalid value: ${JSON.stringify(said)}: ${w}`;
  return why.map((w) => ({ reason: "FieldValueInvalid", message: invalid(w), field }));
}
