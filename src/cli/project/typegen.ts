// `kobun generate types --crd FILE…` (or `--from-cluster --kubeconfig FILE`): TypeScript
// interfaces from existing CRDs, one per served
// version (`KobunExampleV1`), plus the kind's name for the storage version (served) or the top served one, for
// `resource<KobunExample>("kobunexamples.kobun.dev/v1")`; a kind two groups share is named
// with its group too (`CertificateCertManagerIoV1`). Pure text out of parsed CRDs.

import { readFileSync, writeFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";
import { UsageError } from "../../config/index.ts";
import { readFlags, stringFlag } from "../args.ts";
import { KubeClient } from "../../kube/index.ts";

export const GENERATE_HELP =
  "Usage: kobun generate types (--crd FILE [--crd FILE …] | --from-cluster --kubeconfig FILE [--group GROUP])" +
  ` [--out FILE]
Writes TypeScript interfaces for every served version of the CRDs (to stdout, or --out): those in the
files, or those the API server of the kubeconfig serves (only that kubeconfig is read, never the
default one; --group keeps the CRDs of that API group).`;

export async function generateCommand(argv: string[]): Promise<number> {
  const [what, ...rest] = argv;
  const use = "kobun generate types --crd FILE";
  if (what === undefined) throw new UsageError(`kobun generate needs what to generate: ${use}`);
  if (what !== "types") throw new UsageError(`kobun generate: unknown target ${JSON.stringify(what)}; use "${use}"`);
  const { values, every, positionals } = readFlags(rest, {
    crd: { value: true }, out: { value: true }, "from-cluster": { value: false }, kubeconfig: { value: true },
    group: { value: true },
  });
  if (positionals.length > 0) {
    const stray = JSON.stringify(positionals[0]);
    throw new UsageError(`kobun generate types: unexpected argument ${stray}; name a CRD file with --crd FILE`);
  }
  const crds = (every.crd ?? []).filter((file): file is string => file !== true); // scanFlags refuses a bare --crd
  const fromCluster = values["from-cluster"] === true;
  if (fromCluster && crds.length > 0) {
    throw new UsageError("kobun generate types: --crd and --from-cluster exclude each other", "--from-cluster");
  }
  if (!fromCluster && crds.length === 0) {
    throw new UsageError(
      "kobun generate types needs --crd FILE (a YAML file with CustomResourceDefinitions) " +
        "or --from-cluster --kubeconfig FILE",
      "generate",
    );
  }
  const docs = fromCluster
    ? await clusterCRDs(stringFlag(values, "kubeconfig"), stringFlag(values, "group"))
    : crds.flatMap((file) => {
      const text = userFile("--crd", file, () => readFileSync(file, "utf8"));
      return parseAllDocuments(text).map((d) => d.toJS());
    });
  const text = typesFromCRDs(docs);
  const out = stringFlag(values, "out");
  if (out) userFile("--out", out, () => writeFileSync(out, text));
  else process.stdout.write(text);
  return 0;
}

const USER_FILE_ERRORS: Record<string, string> = {
  ENOENT: "no such file or directory", EISDIR: "a directory, not a file", EACCES: "permission denied",
};

/** A file the user named: one that cannot be read or written is a usage error naming it, not a crash. */
function userFile<T>(flag: string, path: string, use: () => T): T {
  try {
    return use();
  } catch (error) {
    const code = (error as { code?: string }).code ?? "";
    const why = USER_FILE_ERRORS[code] ?? (error as Error).message;
    throw new UsageError(`${flag} ${path}: ${why}`, flag);
  }
}

const crdResource = {
  group: "apiextensions.k8s.io", version: "v1", plural: "customresourcedefinitions", kind: "CustomResourceDefinition",
  namespaced: false, statusSubresource: true,
};

/** The CRDs the API server serves, read with the named kubeconfig only (a default one could be any cluster's). */
async function clusterCRDs(kubeconfig: string | undefined, group: string | undefined): Promise<unknown[]> {
  if (!kubeconfig) {
    throw new UsageError(
      "kobun generate types --from-cluster needs --kubeconfig FILE (the default kubeconfig is never read)",
      "--kubeconfig",
    );
  }
  const client = await KubeClient.connect({ kubeconfig });
  // A list's items carry no kind (as kube-apiserver sends them): they are CRDs by where they came from.
  const crds = (await client.listAll(crdResource)).items.map((crd) => ({ ...crd, kind: "CustomResourceDefinition" }))
    .filter((crd: any) => group === undefined || crd.spec?.group === group);
  if (crds.length === 0) {
    const ofGroup = group ? ` of group ${group}` : "";
    const none = `kobun generate types: the API server serves no CustomResourceDefinition${ofGroup}`;
    throw new UsageError(none, "--from-cluster");
  }
  return crds.sort((a, b) => String(a.metadata?.name).localeCompare(String(b.metadata?.name)));
}

export function typesFromCRDs(docs: unknown[]): string {
  const crds = docs.filter((d: any) => d?.kind === "CustomResourceDefinition") as any[];
  if (crds.length === 0) {
    throw new UsageError("kobun generate types: the files hold no CustomResourceDefinition", "generate");
  }
  const out = [
    "// Generated by `kobun generate types`: do not edit; regenerate from the CRDs.",
    'import type { ObjectMeta } from "kobun";',
    "",
  ];
  for (const crd of crds) {
    if (!crd.spec?.names?.kind) {
      throw new UsageError(`kobun generate types: CRD ${crd.metadata?.name ?? "?"} has no spec.names.kind`, "generate");
    }
  }
  const kindsShared = sharedKinds(crds);
  const taken = new Set<string>();
  for (const crd of crds) {
    const { group, names, versions = [] } = crd.spec;
    // A kind that two of the CRDs' groups both have is named with its group too: `CertificateCertManagerIo`;
    // groups that still read alike (a-b.io, a.b.io) are numbered in the order given.
    const named = kindsShared.has(names.kind) ? `${names.kind}${pascal(group)}` : names.kind;
    let kind = named;
    for (let n = 2; taken.has(kind); n++) kind = `${named}${n}`;
    taken.add(kind);
    const aliased = aliasedVersion(versions);
    for (const version of versions) {
      if (version.served === false) continue; // the API server answers 404 for it: nothing to type
      const schema = version.schema?.openAPIV3Schema ?? crd.spec.validation?.openAPIV3Schema
        ?? { "x-kubernetes-preserve-unknown-fields": true };
      const name = `${kind}${pascal(version.name)}`;
      const props = { ...(schema.properties ?? {}) };
      delete props.apiVersion; delete props.kind; delete props.metadata;
      const body = objectType({ ...schema, properties: props }, 0, [
        `apiVersion?: ${JSON.stringify(`${group}/${version.name}`)};`, `kind?: ${JSON.stringify(names.kind)};`,
        "metadata: ObjectMeta;",
      ]);
      const doc = `/** ${names.kind} ${group}/${version.name} (${names.plural}.${group}/${version.name}). */`;
      out.push(doc, `export interface ${name} ${body}`, "");
      if (version === aliased) out.push(`export type ${kind} = ${name};`, "");
    }
  }
  return out.join("\n");
}

/**
 * The version the kind's own name stands for: the storage version when it is served, else the served one that
 * kubectl would pick (Kubernetes' version priority: GA, then beta, then alpha, the higher number first).
 */
function aliasedVersion(versions: any[]): any {
  const served = versions.filter((version) => version.served !== false);
  return served.find((version) => version.storage) ?? served.sort((a, b) => rank(b.name) - rank(a.name))[0];
}

/** A version's place in Kubernetes' priority, higher first: v2 > v1 > v1beta2 > v1beta1 > v1alpha1 > others. */
function rank(name: string): number {
  const parts = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(String(name));
  if (!parts) return -1;
  const stage = parts[2] === undefined ? 2 : parts[2] === "beta" ? 1 : 0;
  return stage * 1e8 + Number(parts[1]) * 1e4 + Number(parts[3] ?? 0);
}

/** The kinds more than one API group among `crds` has. */
function sharedKinds(crds: any[]): Set<string> {
  const groups = new Map<string, Set<string>>();
  for (const crd of crds) {
    const kind = crd.spec.names.kind as string;
    groups.set(kind, (groups.get(kind) ?? new Set()).add(String(crd.spec.group)));
  }
  return new Set([...groups].filter(([, of]) => of.size > 1).map(([kind]) => kind));
}

/** "cert-manager.io" → "CertManagerIo", "v1beta1" → "V1beta1": a part of a TypeScript name. */
function pascal(text: string): string {
  return text.split(/[^A-Za-z0-9]+/).filter(Boolean).map((part) => part[0]!.toUpperCase() + part.slice(1)).join("");
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function typeOf(schema: any, depth: number): string {
  if (!schema || typeof schema !== "object") return "unknown";
  let type: string;
  if (schema["x-kubernetes-int-or-string"]) type = "number | string";
  else if (Array.isArray(schema.enum)) type = schema.enum.map((v: unknown) => JSON.stringify(v)).join(" | ");
  else if (schema.type === "array") type = `${wrap(typeOf(schema.items, depth))}[]`;
  else if (isObjectSchema(schema)) type = objectType(schema, depth, []);
  else if (schema.type === "string") type = "string";
  else if (schema.type === "integer" || schema.type === "number") type = "number";
  else if (schema.type === "boolean") type = "boolean";
  else type = "unknown";
  return schema.nullable ? `${type} | null` : type;
}

/** Preserve-unknown-fields alone (no type, no properties: controller-gen's JSON field) is any value, not an object. */
function isObjectSchema(schema: any): boolean {
  return schema.type === "object" || schema.properties || schema.additionalProperties !== undefined;
}

function objectType(schema: any, depth: number, head: string[]): string {
  const pad = "  ".repeat(depth + 1);
  const required = new Set<string>(schema.required ?? []);
  const lines = head.map((l) => pad + l);
  for (const [key, sub] of Object.entries<any>(schema.properties ?? {})) {
    if (sub?.description) {
      const text = String(sub.description).replace(/\*\//g, "*\\/").replace(/\s+/g, " ").trim();
      lines.push(`${pad}/** ${text} */`);
    }
    const name = IDENTIFIER.test(key) ? key : JSON.stringify(key);
    lines.push(`${pad}${name}${required.has(key) ? "" : "?"}: ${typeOf(sub, depth + 1)};`);
  }
  const extra = schema.additionalProperties;
  if (extra && typeof extra === "object") lines.push(`${pad}[key: string]: ${typeOf(extra, depth + 1)};`);
  else if (extra === true || schema["x-kubernetes-preserve-unknown-fields"]) {
    lines.push(`${pad}[key: string]: unknown;`);
  }
  if (lines.length === 0) return "{}";
  return `{\n${lines.join("\n")}\n${"  ".repeat(depth)}}`;
}

function wrap(type: string): string {
  return type.includes("|") ? `(${type})` : type;
}
