// Credentials from plugins: `exec` (client.authentication.k8s.io ExecCredential, run here
// natively) and legacy `auth-provider` entries (OIDC, gcp, azure), through client-node's
// KubeConfig.
//
// Why exec is not delegated to client-node: `dist/config.js` pulls every auth provider, the
// generated API and undici. A lazy `import("…/config.js")` keeps it out of `bun run`, but
// `bun build --compile` still bundles it and parses it at start: measured 77 ms / 47 MB for a
// token-only binary versus 15 ms / 33 MB without it. So the heavy module is imported only for
// auth-provider users, through a specifier the bundler cannot see (see loadKubeConfigModule).

import { KubeconfigError, pemFrom, type ResolvedKubeconfig } from "./kubeconfig.ts";
import { withoutCredentials } from "../util/index.ts";

export interface PluginCredential {
  /** The Authorization header value, if the plugin gave a token. */
  authorization?: string;
  /** Client certificate and key (PEM), if the plugin gave them. */
  cert?: string;
  key?: string;
  /** Epoch ms after which the credential must be fetched again. */
  validUntil: number;
}

/** Credentials without a stated expiry are re-checked this often (auth providers cache them themselves). */
const RECHECK_MS = 60_000;
/** Refresh this long before a stated expiry, so requests never carry a token about to lapse. */
const EXPIRY_MARGIN_MS = 10_000;
/** An exec plugin that has not answered by then is killed. */
const EXEC_TIMEOUT_MS = 60_000;

/** The ExecCredential versions a plugin may speak, as in kubectl v1.37. */
const EXEC_VERSIONS = ["client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"];
const INTERACTIVE_MODES = ["Never", "IfAvailable", "Always"];

export class PluginAuth {
  private cached?: { credential: PluginCredential; expiry?: number };
  private kubeConfig?: Promise<any>;
  private readonly cluster: ResolvedKubeconfig["cluster"];
  private readonly context: ResolvedKubeconfig["context"];
  private readonly user: ResolvedKubeconfig["user"];

  /** Checks an exec entry as kubectl does (KubeconfigError), so a kubeconfig kubectl refuses is refused here too. */
  constructor(private readonly config: ResolvedKubeconfig) {
    ({ cluster: this.cluster, context: this.context, user: this.user } = config);
    const exec = this.user.exec;
    if (!exec) return;
    const problems: string[] = [];
    const whose = `for user "${this.user.name}" in kubeconfig ${config.source}`;
    if (!exec.apiVersion) problems.push(`exec: apiVersion must be specified ${whose}`);
    else if (!EXEC_VERSIONS.includes(exec.apiVersion)) {
      const version = JSON.stringify(exec.apiVersion);
      problems.push(`exec: apiVersion ${version} ${whose} is not one of ${EXEC_VERSIONS.join(", ")}`);
    }
    // v1beta1 defaults it to IfAvailable; v1 wants it said.
    if (exec.interactiveMode === undefined && exec.apiVersion !== EXEC_VERSIONS[1]) {
      problems.push(`exec: interactiveMode must be specified ${whose} (Never, IfAvailable or Always)`);
    } else if (exec.interactiveMode !== undefined && !INTERACTIVE_MODES.includes(exec.interactiveMode)) {
      problems.push(`exec: unknown interactiveMode ${JSON.stringify(exec.interactiveMode)} ${whose}`);
    }
    if (problems.length) throw new KubeconfigError(problems.join("; "));
  }

  /** A credential; `fresh` drops every cached one (after a 401). */
  async credential(fresh: boolean): Promise<PluginCredential> {
    const now = Date.now();
    const cached = this.cached;
    if (!fresh && cached && (cached.expiry === undefined || now < cached.expiry - EXPIRY_MARGIN_MS) && this.user.exec) {
      return { ...cached.credential, validUntil: validUntil(now, cached.expiry) };
    }
    const { credential, expiry } = this.user.exec ? await this.runExec() : await this.askAuthProvider(fresh);
    this.cached = { credential, expiry };
    return { ...credential, validUntil: validUntil(Date.now(), expiry) };
  }

  private async runExec(): Promise<{ credential: PluginCredential; expiry?: number }> {
    const exec = this.user.exec!;
    const what = `exec plugin ${JSON.stringify(exec.command)} of user "${this.user.name}"`;
    if (typeof exec.command !== "string" || !exec.command) throw new Error(`${what}: no command given`);
    const interactive = interactivity(exec.interactiveMode ?? "IfAvailable", what);
    const env: Record<string, string | undefined> = { ...process.env };
    for (const entry of Array.isArray(exec.env) ? exec.env : []) {
      if (entry?.name) env[entry.name] = String(entry.value ?? "");
    }
    env.KUBERNETES_EXEC_INFO = JSON.stringify({
      apiVersion: exec.apiVersion,
      kind: "ExecCredential",
      spec: { interactive, ...(exec.provideClusterInfo === true ? { cluster: this.clusterInfo() } : {}) },
    });
    let child: ReturnType<typeof Bun.spawn>;
    try {
      child = Bun.spawn([exec.command, ...(Array.isArray(exec.args) ? exec.args.map(String) : [])], {
        env,
        stdin: interactive ? "inherit" : "ignore",
        stdout: "pipe",
        stderr: "pipe",
        timeout: EXEC_TIMEOUT_MS,
      });
    } catch (error) {
      const hint = typeof exec.installHint === "string" ? `; ${exec.installHint.trim()}` : "";
      throw new Error(`${what} could not be started: ${(error as Error).message}${hint}`, { cause: error });
    }
    const [stdout, stderr, code] = await Promise.all([
      new Response(child.stdout as ReadableStream).text(),
      new Response(child.stderr as ReadableStream).text(),
      child.exited,
    ]);
    if (code !== 0) throw new Error(`${what} failed with exit code ${code}: ${firstLine(stderr)}`);
    return execCredential(stdout, exec.apiVersion, what);
  }

  /** What `provideClusterInfo: true` hands the plugin: the cluster as kubectl describes it (ExecCredential spec). */
  private clusterInfo(): Record<string, unknown> {
    const { cluster, execExtension } = this.config;
    const ca = pemFrom(cluster.caData, cluster.caFile, "certificate-authority");
    return {
      server: cluster.server,
      ...(cluster.tlsServerName ? { "tls-server-name": cluster.tlsServerName } : {}),
      ...(cluster.skipTLSVerify ? { "insecure-skip-tls-verify": true } : {}),
      ...(ca ? { "certificate-authority-data": Buffer.from(ca).toString("base64") } : {}),
      ...(cluster.proxyUrl ? { "proxy-url": cluster.proxyUrl } : {}),
      ...(execExtension !== undefined ? { config: execExtension } : {}),
    };
  }

  private async askAuthProvider(fresh: boolean): Promise<{ credential: PluginCredential; expiry?: number }> {
    if (fresh || !this.kubeConfig) this.kubeConfig = this.loadKubeConfig();
    const what = `auth provider "${this.user.authProvider?.name}" of user "${this.user.name}"`;
    let kc: any;
    try {
      kc = await this.kubeConfig;
    } catch (error) {
      this.kubeConfig = undefined;
      throw new Error(
        // A compiled operator never loads it, even beside a node_modules that holds it: Bun 1.4.5's compiled
        // runtime does not resolve the packages client-node imports from disk (test/cli/operator/auth-provider-binary).
        `${what} needs @kubernetes/client-node, which a compiled operator cannot load (${firstLine(error)}); ` +
          "use an exec credential plugin instead (kobun run from the project, not compiled, has it)",
        { cause: error },
      );
    }
    const opts: { headers: Record<string, string>; cert?: unknown; key?: unknown } = { headers: {} };
    try {
      await kc.applyToHTTPSOptions(opts);
    } catch (error) {
      this.kubeConfig = undefined;
      throw new Error(`${what} failed: ${firstLine(error)}`, { cause: error });
    }
    const pem = (v: unknown) => (v === undefined || v === null ? undefined : String(v));
    const authorization = opts.headers.Authorization ?? opts.headers.authorization;
    return { credential: { authorization, cert: pem(opts.cert), key: pem(opts.key), validUntil: 0 } };
  }

  private async loadKubeConfig(): Promise<any> {
    const { KubeConfig } = await loadKubeConfigModule(CLIENT_NODE_CONFIG);
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [this.cluster],
      users: [{ name: this.user.name, authProvider: this.user.authProvider, token: this.user.token }],
      contexts: [{ ...this.context, user: this.user.name }],
      currentContext: this.context.name,
    });
    return kc;
  }
}

// A variable specifier: `bun build` neither bundles nor parses the module (see the header).
const CLIENT_NODE_CONFIG = ["@kubernetes/client-node", "dist", "config.js"].join("/");
function loadKubeConfigModule(specifier: string): Promise<{ KubeConfig: new () => any }> {
  return import(specifier);
}

/**
 * Whether the plugin gets this terminal (stdin), as kubectl decides: Always needs one and fails without, IfAvailable
 * takes one if there is one. An operator in a pod has none.
 */
function interactivity(mode: string, what: string): boolean {
  if (mode === "Never") return false;
  const terminal = process.stdin.isTTY === true;
  if (mode === "Always" && !terminal) {
    throw new Error(`${what} wants interactiveMode Always, but standard input is not a terminal`);
  }
  return terminal;
}

/** The credential in a plugin's stdout, checked as kubectl does (its version is the one asked for). */
function execCredential(
  stdout: string, apiVersion: string, what: string,
): { credential: PluginCredential; expiry?: number } {
  let answer: any;
  try {
    answer = JSON.parse(stdout);
  } catch {
    throw new Error(`${what} printed no ExecCredential JSON (stdout is not JSON)`);
  }
  if (answer?.apiVersion !== apiVersion || answer?.kind !== "ExecCredential") {
    throw new Error(
      `${what} is configured to use ${apiVersion}, ` +
        `but printed ${String(answer?.kind)} of ${String(answer?.apiVersion)}`,
    );
  }
  const status = answer.status;
  if (!status || typeof status !== "object") throw new Error(`${what} printed an ExecCredential without a status`);
  const expiry = typeof status.expirationTimestamp === "string" ? Date.parse(status.expirationTimestamp) : undefined;
  const credential: PluginCredential = { validUntil: 0 };
  if (typeof status.token === "string" && status.token) credential.authorization = `Bearer ${status.token}`;
  const cert = typeof status.clientCertificateData === "string" && status.clientCertificateData;
  const key = typeof status.clientKeyData === "string" && status.clientKeyData;
  if (!cert !== !key) throw new Error(`${what} returned only a client certificate or a key, not both`);
  if (cert && key) {
    credential.cert = cert;
    credential.key = key;
  }
  if (!credential.authorization && !credential.cert) {
    throw new Error(`${what} gave neither a token nor a client certificate`);
  }
  return { credential, expiry: Number.isNaN(expiry) ? undefined : expiry };
}

function validUntil(now: number, expiry: number | undefined): number {
  if (expiry === undefined) return now + RECHECK_MS;
  return Math.min(now + RECHECK_MS, Math.max(now, expiry - EXPIRY_MARGIN_MS));
}

/** The first line of a plugin's complaint, without anything credential-shaped (it may print its token). */
function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return withoutCredentials(text.trim().split("\n")[0] ?? "").slice(0, 300) || "(no message)";
}
