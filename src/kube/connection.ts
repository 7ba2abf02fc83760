// Where the API server is and how to prove who we are: a kubeconfig context or the
// in-cluster service account, turned into TLS options for Bun's fetch and an
// Authorization header that is cached until it may have changed.
// Nothing here logs or prints a token, key or password; `describe()` is safe to log.

import { KubeconfigError, pemFrom, resolveKubeconfig, type ResolvedKubeconfig } from "./kubeconfig.ts";
import { PluginAuth } from "./plugin-auth.ts";
import { readKubeconfig, resolveMergedKubeconfig } from "./kubeconfig-merge.ts";
import { CredentialConnection, readToken, TOKEN_FILE_RECHECK_MS, type Loaded } from "./credential-connection.ts";
import type { AuthKind, Connection, ConnectionTLS } from "./connection-shape.ts";

export type { AuthKind, Connection, ConnectionTLS } from "./connection-shape.ts";

export { KubeconfigError } from "./kubeconfig.ts";

export const DEFAULT_SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

export interface ConnectOptions {
  /** An explicit kubeconfig file path. */
  kubeconfig?: string;
  /** Or the kubeconfig's contents (relative paths in it are relative to the current directory). */
  kubeconfigText?: string;
  /** The context to use instead of the kubeconfig's current-context. */
  context?: string;
  /** Use the pod's service account (token, ca.crt, namespace files). */
  inCluster?: boolean;
  /** Where the service-account files are; for tests. */
  serviceAccountDir?: string;
  /** Overrides the server URL (for in-cluster: instead of KUBERNETES_SERVICE_HOST/PORT). */
  server?: string;
  /** Only when true: KUBECONFIG, then ~/.kube/config, then in-cluster. */
  useDefaults?: boolean;
}

export async function connect(options: ConnectOptions): Promise<Connection> {
  if (options.kubeconfigText !== undefined) {
    const config = await resolveKubeconfig(options.kubeconfigText, { context: options.context });
    return fromKubeconfig(config, options.server);
  }
  if (options.kubeconfig) return fromKubeconfigFile(options.kubeconfig, options);
  if (options.inCluster) return inCluster(options);
  if (options.useDefaults) {
    const files = await defaultKubeconfigs({ KUBECONFIG: process.env.KUBECONFIG, HOME: process.env.HOME });
    if (files.length > 1) return fromKubeconfig(await resolveMergedKubeconfig(files, options.context), options.server);
    if (files.length === 1) return fromKubeconfigFile(files[0]!, options);
    if (process.env.KUBERNETES_SERVICE_HOST) return inCluster(options);
    throw new KubeconfigError(
      "no Kubernetes credentials found: KUBECONFIG is unset or names no existing file, ~/.kube/config does not " +
        "exist, and KUBERNETES_SERVICE_HOST is unset (not in a pod)",
    );
  }
  throw new KubeconfigError("connect() needs one of: kubeconfig, kubeconfigText, inCluster, or useDefaults: true");
}

/**
 * The kubeconfigs kubectl would read, to be merged in this order: KUBECONFIG's entries that exist (each once),
 * else $HOME/.kube/config if it does.
 */
export async function defaultKubeconfigs(env: { KUBECONFIG?: string; HOME?: string }): Promise<string[]> {
  const files: string[] = [];
  for (const file of new Set(env.KUBECONFIG?.split(":").filter(Boolean))) if (await present(file)) files.push(file);
  if (files.length) return files;
  // $HOME first, as os.homedir() does (which loads node:os; only a HOME-less process needs it).
  const home = `${(env.HOME || process.getBuiltinModule("node:os").homedir()).replace(/\/+$/, "")}/.kube/config`;
  return (await present(home)) ? [home] : [];
}

/**
 * Whether anything is at `path`. A directory counts: reading it then fails with a message naming
 * it, rather than the lookup moving on to another file (and so, perhaps, another cluster).
 */
async function present(path: string): Promise<boolean> {
  const file = Bun.file(path);
  return (await file.exists()) || file.stat().then(() => true, () => false);
}

async function fromKubeconfigFile(path: string, options: ConnectOptions): Promise<Connection> {
  const text = await readKubeconfig(path);
  return fromKubeconfig(await resolveKubeconfig(text, { path, context: options.context }), options.server);
}

/** A connection from one resolved kubeconfig context (also what on.login credentials become: login.ts). */
export async function fromKubeconfig(config: ResolvedKubeconfig, serverOverride?: string): Promise<Connection> {
  const { cluster, user, context } = config;
  const server = (serverOverride ?? cluster.server).replace(/\/+$/, "");
  const tls = kubeconfigTls(config, server);
  const { kind, load } = userCredentials(config, tls);
  const connection = new CredentialConnection(server, tls, user.name, kind, context.name, context.namespace, load);
  connection.proxy = proxyOf(config);
  await connection.authHeaders(); // fail at connect time, not on the first request
  return connection;
}

/** The TLS options of a kubeconfig's cluster and user for `server`; undefined for plain http. */
function kubeconfigTls(config: ResolvedKubeconfig, server: string): ConnectionTLS | undefined {
  const { cluster, user } = config;
  if (!server.startsWith("https:")) {
    if (server.startsWith("http:")) return undefined;
    throw new KubeconfigError(
      `cluster "${cluster.name}" in kubeconfig ${config.source} has a server URL that is neither http nor https`,
    );
  }
  const tls: ConnectionTLS = { rejectUnauthorized: !cluster.skipTLSVerify };
  if (cluster.skipTLSVerify && (cluster.caData || cluster.caFile)) {
    // kubectl refuses it too: which of the two did the user mean?
    throw new KubeconfigError(
      `cluster "${cluster.name}" in kubeconfig ${config.source} has a certificate-authority and ` +
        "insecure-skip-tls-verify: true; keep one of them (kubectl refuses this too)",
    );
  }
  const ca = pemFrom(cluster.caData, cluster.caFile, "certificate-authority");
  if (ca) tls.ca = ca;
  if (cluster.tlsServerName) tls.serverName = cluster.tlsServerName;
  const cert = pemFrom(user.certData, user.certFile, "client-certificate");
  const key = pemFrom(user.keyData, user.keyFile, "client-key");
  if (cert && key) {
    tls.cert = cert;
    tls.key = key;
  } else if (cert || key) {
    throw new KubeconfigError(
      `user "${user.name}" in kubeconfig ${config.source} has a client certificate without its key, ` +
        "or a key without its certificate",
    );
  }
  return tls;
}

/** How a kubeconfig user's credentials are loaded (a plugin, a token, a token file, basic auth), and their kind. */
function userCredentials(
  config: ResolvedKubeconfig, tls: ConnectionTLS | undefined,
): { kind: AuthKind; load: (fresh: boolean) => Promise<Loaded> } {
  const { user } = config;
  const extra = impersonation(config);
  const forever = () => Promise.resolve({ headers: extra, validUntil: Infinity });
  let kind: AuthKind = tls?.cert ? "client-certificate" : "none";
  let load: (fresh: boolean) => Promise<Loaded> = forever;

  if (user.exec || user.authProvider) {
    kind = user.exec ? "exec" : "auth-provider";
    const plugin = new PluginAuth(config);
    load = async (fresh) => {
      const credential = await plugin.credential(fresh);
      const headers = credential.authorization ? { ...extra, Authorization: credential.authorization } : extra;
      return { headers, validUntil: credential.validUntil, cert: credential.cert, key: credential.key };
    };
  } else if (user.tokenFile) {
    // As client-go: the file wins over a `token` beside it (it is re-read; the token is what an unreadable file
    // falls back to).
    kind = "token-file";
    const file = user.tokenFile;
    const fallback = user.token;
    load = async () => {
      const token = fallback === undefined
        ? await readToken(file, "token-file")
        : await readToken(file, "token-file").catch(() => fallback);
      const headers = { ...extra, Authorization: `Bearer ${token}` };
      return { headers, validUntil: Date.now() + TOKEN_FILE_RECHECK_MS };
    };
  } else if (user.token) {
    kind = "token";
    const headers = { ...extra, Authorization: `Bearer ${user.token}` };
    load = () => Promise.resolve({ headers, validUntil: Infinity });
  } else if (user.username !== undefined && user.password !== undefined) {
    kind = "basic";
    const basic = Buffer.from(`${user.username}:${user.password}`).toString("base64");
    const headers = { ...extra, Authorization: `Basic ${basic}` };
    load = () => Promise.resolve({ headers, validUntil: Infinity });
  }
  return { kind, load };
}

/**
 * The Impersonate-* headers of a user's `as` (the rest count only with it, as in kubectl). Bun's fetch sends a
 * header named twice as one comma-joined line, which the server reads as one group: so one group at most.
 */
function impersonation(config: ResolvedKubeconfig): Record<string, string> {
  const { user } = config;
  if (!user.impersonate) return {};
  const headers: Record<string, string> = { "Impersonate-User": user.impersonate };
  if (user.impersonateUid) headers["Impersonate-Uid"] = user.impersonateUid;
  const lists: [string, string[]][] = [["Impersonate-Group", user.impersonateGroups ?? []]];
  for (const [key, values] of Object.entries(user.impersonateExtra ?? {})) {
    lists.push([`Impersonate-Extra-${encodeURIComponent(key)}`, values]);
  }
  for (const [header, values] of lists) {
    if (values.length > 1) {
      throw new KubeconfigError(
        `user "${user.name}" in kubeconfig ${config.source} impersonates with ${values.length} values of ` +
          `${header}: kobun can send one (its HTTP client joins repeated headers into one value)`,
      );
    }
    if (values.length === 1) headers[header] = values[0]!;
  }
  return headers;
}

/** The cluster's `proxy-url`: an http(s) proxy, which fetch tunnels through with CONNECT. */
function proxyOf(config: ResolvedKubeconfig): string | undefined {
  const proxy = config.cluster.proxyUrl;
  if (!proxy) return undefined;
  if (/^https?:\/\//.test(proxy)) return proxy;
  throw new KubeconfigError(
    `cluster "${config.cluster.name}" in kubeconfig ${config.source} has a proxy-url kobun cannot use: ` +
      "an http:// or https:// proxy only (not socks5)",
  );
}

async function inCluster(options: ConnectOptions): Promise<Connection> {
  // Joined with "/" below: a trailing slash goes ("/" gives "/token").
  const dir = (options.serviceAccountDir ?? DEFAULT_SERVICE_ACCOUNT_DIR).replace(/\/+$/, "");
  let server = options.server;
  if (!server) {
    const host = process.env.KUBERNETES_SERVICE_HOST;
    const port = process.env.KUBERNETES_SERVICE_PORT ?? "443";
    if (!host) throw new KubeconfigError("in-cluster config needs KUBERNETES_SERVICE_HOST (are we running in a pod?)");
    server = `https://${host.includes(":") ? `[${host}]` : host}:${port}`;
  }
  server = server.replace(/\/+$/, "");
  // Not node:path and node:fs: loading them costs a compiled operator ≈ 2 MB of RSS for good.
  const tokenFile = `${dir}/token`;
  if (!(await Bun.file(tokenFile).exists())) {
    throw new KubeconfigError(`in-cluster config: no service-account token at ${tokenFile}`);
  }
  let tls: ConnectionTLS | undefined;
  if (server.startsWith("https:")) {
    tls = { rejectUnauthorized: true };
    const caFile = Bun.file(`${dir}/ca.crt`);
    if (await caFile.exists()) tls.ca = await caFile.text();
  }
  let namespace: string | undefined;
  try {
    namespace = (await Bun.file(`${dir}/namespace`).text()).trim() || undefined;
  } catch {
    namespace = undefined;
  }
  const load = async () => ({
    headers: { Authorization: `Bearer ${await readToken(tokenFile, "service-account token")}` },
    validUntil: Date.now() + TOKEN_FILE_RECHECK_MS,
  });
  const connection = new CredentialConnection(
    server, tls, "serviceaccount", "service-account", undefined, namespace, load,
  );
  await connection.authHeaders();
  return connection;
}
