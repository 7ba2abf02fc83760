// Reading a kubeconfig cheaply: Bun's YAML parser plus validators of our own, the same checks
// and messages as client-node's `config_types.js` (whose module imports node:fs: ≈ 2 MB of
// idle RSS in a compiled operator). The heavy `KubeConfig` class (every auth provider, the
// generated API, undici) is loaded only for exec and auth-provider users, by ./plugin-auth.ts.
// node:fs and node:path are loaded only when a kubeconfig names files relative to it or PEM files.

import type { Cluster, Context } from "@kubernetes/client-node/dist/config_types.js";
import { parserComplaint } from "../util/index.ts";

/** The user entry of a kubeconfig as written (paths already made absolute). */
export interface KubeconfigUser {
  name: string;
  token?: string;
  tokenFile?: string;
  certData?: string;
  certFile?: string;
  keyData?: string;
  keyFile?: string;
  username?: string;
  password?: string;
  /** `as`, `as-uid`, `as-groups` and `as-user-extra`: who the requests act as. */
  impersonate?: string;
  impersonateUid?: string;
  impersonateGroups?: string[];
  impersonateExtra?: Record<string, string[]>;
  exec?: Record<string, any>;
  authProvider?: Record<string, any>;
}

/** One context of a kubeconfig, resolved to its cluster and user. */
export interface ResolvedKubeconfig {
  /** Where it came from, for messages: a path or "(inline kubeconfig)". */
  source: string;
  context: Context;
  cluster: Cluster;
  user: KubeconfigUser;
  /** The cluster's `client.authentication.k8s.io/exec` extension: an exec plugin's `spec.cluster.config`. */
  execExtension?: unknown;
}

/** The sections whose entries may name files relative to the kubeconfig they came from. */
export type EntrySection = "clusters" | "users";

export class KubeconfigError extends Error {
  override readonly name = "KubeconfigError";
}

/** Parses a kubeconfig and picks one context (`context`, else `current-context`). */
export async function resolveKubeconfig(
  text: string, options: { path?: string; context?: string },
): Promise<ResolvedKubeconfig> {
  const source = options.path ?? "(inline kubeconfig)";
  const doc = parsedDocument(text, source, options.path);
  if (!doc || typeof doc !== "object") throw new KubeconfigError(`kubeconfig ${source} is empty or not a mapping`);
  const { path } = options;
  const dirOf = () => (path ? process.getBuiltinModule("node:path").dirname(path) : undefined);
  return resolveDocument(doc, { source, context: options.context, dirOf });
}

/**
 * Picks one context of a parsed kubeconfig (or of several merged: ./kubeconfig-merge.ts). `dirOf` tells the
 * directory that a cluster's or user's relative file names are relative to (undefined: the current directory).
 */
export function resolveDocument(
  doc: any,
  options: { source: string; context?: string; dirOf: (section: EntrySection, name: string) => string | undefined },
): ResolvedKubeconfig {
  const { source } = options;

  let contexts: Context[];
  let clusters: Cluster[];
  try {
    contexts = newContexts(doc.contexts);
    clusters = newClusters(doc.clusters);
  } catch (error) {
    throw new KubeconfigError(`kubeconfig ${source}: ${parserComplaint(error)}`);
  }

  const contextName: string | undefined = options.context ?? doc["current-context"] ?? undefined;
  if (!contextName) {
    const choose = contexts.length
      ? `; pass a context (one of: ${names(contexts)})`
      : " and no contexts to choose from";
    throw new KubeconfigError(`kubeconfig ${source} has no current-context${choose}`);
  }
  const context = contexts.find((c) => c.name === contextName);
  if (!context) {
    throw new KubeconfigError(
      `context "${contextName}" not found in kubeconfig ${source}; available: ${names(contexts)}`,
    );
  }
  const cluster = clusters.find((c) => c.name === context.cluster);
  if (!cluster) {
    throw new KubeconfigError(
      `cluster "${context.cluster}" of context "${context.name}" not found in kubeconfig ${source}`,
    );
  }
  // node:path only for a relative name (a compiled operator pays ≈ 2 MB of RSS for loading it).
  const relativeTo = (section: "clusters" | "users", name: string) => (file: string) => {
    if (file.startsWith("/")) return file;
    const path = process.getBuiltinModule("node:path");
    return path.isAbsolute(file) ? file : path.join(options.dirOf(section, name) ?? process.cwd(), file);
  };
  const clusterDir = relativeTo("clusters", cluster.name);
  const resolvedCluster: Cluster = cluster.caFile ? { ...cluster, caFile: clusterDir(cluster.caFile) } : cluster;

  let user: KubeconfigUser = { name: context.user ?? "" };
  if (context.user) {
    const entry = Array.isArray(doc.users) ? doc.users.find((u: any) => u?.name === context.user) : undefined;
    if (!entry) {
      throw new KubeconfigError(
        `user "${context.user}" of context "${context.name}" not found in kubeconfig ${source}`,
      );
    }
    user = readUser(entry, relativeTo("users", context.user));
  }
  return { source, context, cluster: resolvedCluster, user, execExtension: execExtension(doc, cluster.name) };
}

/** The kubeconfig's text as JSON or YAML, with a parse error that does not quote it. */
export function parsedDocument(text: string, source: string, path: string | undefined): any {
  const trimmed = text.trimStart();
  const json = trimmed.startsWith("{");
  try {
    // Bun's native YAML parser: the `yaml` package would add ~20 ms and ~10 MB to every start.
    return json ? JSON.parse(trimmed) : Bun.YAML.parse(text);
  } catch (error) {
    // The parser's own message quotes the text it choked on, which may be a token or a key.
    const hint = path ? `; see where with \`kubectl config view --kubeconfig ${path}\`` : "";
    const what = `kubeconfig ${source} (${text.length} characters) is not valid ${json ? "JSON" : "YAML"}`;
    throw new KubeconfigError(`${what}: ${parserComplaint(error)}${hint}`);
  }
}

function readUser(entry: any, abs: (file: string) => string): KubeconfigUser {
  const u = entry.user ?? {};
  const str = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined);
  const file = (v: unknown) => (str(v) ? abs(v as string) : undefined);
  let exec: Record<string, any> | undefined;
  if (u.exec && typeof u.exec === "object") {
    const spec: Record<string, any> = { ...u.exec };
    // kubectl: a command with a path separator is relative to the kubeconfig's directory.
    if (typeof spec.command === "string" && spec.command.includes("/")) spec.command = abs(spec.command);
    exec = spec;
  }
  return {
    name: String(entry.name),
    token: str(u.token),
    tokenFile: file(u["token-file"] ?? u.tokenFile),
    certData: str(u["client-certificate-data"]),
    certFile: file(u["client-certificate"]),
    keyData: str(u["client-key-data"]),
    keyFile: file(u["client-key"]),
    username: str(u.username),
    password: str(u.password),
    impersonate: str(u.as),
    impersonateUid: str(u["as-uid"]),
    impersonateGroups: Array.isArray(u["as-groups"]) ? u["as-groups"].map(String) : undefined,
    impersonateExtra: extraOf(u["as-user-extra"]),
    exec,
    authProvider: u["auth-provider"] && typeof u["auth-provider"] === "object" ? u["auth-provider"] : undefined,
  };
}

/** `as-user-extra`: each key's values as a list of strings. */
function extraOf(extra: unknown): Record<string, string[]> | undefined {
  if (!extra || typeof extra !== "object") return undefined;
  const out: Record<string, string[]> = {};
  for (const [key, values] of Object.entries(extra)) out[key] = (Array.isArray(values) ? values : [values]).map(String);
  return out;
}

/** The named cluster's `client.authentication.k8s.io/exec` extension, as written. */
function execExtension(doc: any, clusterName: string): unknown {
  const entry = Array.isArray(doc.clusters) ? doc.clusters.find((c: any) => c?.name === clusterName) : undefined;
  const extensions = entry?.cluster?.extensions;
  if (!Array.isArray(extensions)) return undefined;
  return extensions.find((e: any) => e?.name === "client.authentication.k8s.io/exec")?.extension;
}

function names(list: { name: string }[]): string {
  return list.length ? list.map((c) => c.name).join(", ") : "(none)";
}

/** PEM text from a `*-data` (base64) field or a file. */
export function pemFrom(data: string | undefined, file: string | undefined, what: string): string | undefined {
  if (data) return Buffer.from(data, "base64").toString("utf8");
  if (file) {
    try {
      return process.getBuiltinModule("node:fs").readFileSync(file, "utf8");
    } catch (error) {
      throw new KubeconfigError(`cannot read ${what} file ${file}: ${(error as Error).message}`);
    }
  }
  return undefined;
}

/** client-node's newContexts: each entry needs a name and a context naming its cluster. */
function newContexts(list: unknown): Context[] {
  return entries(list, "contexts", "context", "cluster", (elt): Context => ({
    cluster: elt.context.cluster, name: elt.name,
    user: elt.context.user || undefined, namespace: elt.context.namespace || undefined,
  }));
}

/** client-node's newClusters: each entry needs a name and a server (its trailing slash dropped). */
function newClusters(list: unknown): Cluster[] {
  return entries(list, "clusters", "cluster", "server", (elt): Cluster => ({
    caData: elt.cluster["certificate-authority-data"],
    caFile: elt.cluster["certificate-authority"],
    name: elt.name,
    server: elt.cluster.server.replace(/\/$/, ""),
    skipTLSVerify: elt.cluster["insecure-skip-tls-verify"] === true,
    tlsServerName: elt.cluster["tls-server-name"],
    proxyUrl: elt.cluster["proxy-url"],
  }));
}

/**
 * A kubeconfig list whose entries each need a name, an `inner` map and its `field`, checked in that order
 * (client-node's messages).
 */
function entries<T>(list: unknown, section: string, inner: string, field: string, build: (elt: any) => T): T[] {
  if (!Array.isArray(list)) return [];
  return list.map((elt: any, i) => {
    const required: [unknown, string][] = [
      [elt.name, "name"], [elt[inner], inner], [elt[inner]?.[field], `${inner}.${field}`],
    ];
    for (const [value, path] of required) if (!value) throw new Error(`${section}[${i}].${path} is missing`);
    return build(elt);
  });
}
