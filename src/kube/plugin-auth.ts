// Credentials from plugins: `exec` (client.authentication.k8s.io ExecCredential, run here
// natively) and legacy `auth-provider` entries (OIDC, gcp, azure), through client-node's
// KubeConfig.
//
// Why exec is not delegated to client-node: `dist/config.js` pulls every auth provider, the
// generated API and undici. A lazy `import("…/config.js")` keeps it out of `bun run`, but
// `bun build --compile` still bundles it and parses it at start: measured 77 ms / 47 MB for a
// token-only binary versus 15 ms / 33 MB without it. So the heavy module is imported only for
// auth-provider users, through a specifier the bundler cannot see (see loadKubeConfigModule).

import type { Cluster, Context } from "@kubernetes/client-node/dist/config_types.js";
import type { KubeconfigUser } from "./kubeconfig.ts";
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

export class PluginAuth {
  private cached?: { credential: PluginCredential; expiry?: number };
  private kubeConfig?: Promise<any>;

  constructor(
    private readonly cluster: Cluster,
    private readonly context: Context,
    private readonly user: KubeconfigUser,
  ) {}

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
    const env: Record<string, string | undefined> = { ...process.env };
    for (const entry of Array.isArray(exec.env) ? exec.env : []) {
      if (entry?.name) env[entry.name] = String(entry.value ?? "");
    }
    env.KUBERNETES_EXEC_INFO = JSON.stringify({
      apiVersion: exec.apiVersion ?? "client.authentication.k8s.io/v1",
      kind: "ExecCredential",
      spec: { interactive: false },
    });
    let child: ReturnType<typeof Bun.spawn>;
    try {
      child = Bun.spawn([exec.command, ...(Array.isArray(exec.args) ? exec.args.map(String) : [])], {
        env,
        stdin: "ignore",
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
    let status: any;
    try {
      status = JSON.parse(stdout)?.status;
    } catch {
      throw new Error(`${what} printed no ExecCredential JSON (stdout is not JSON)`);
    }
    if (!status || typeof status !== "object") throw new Error(`${what} printed an ExecCredential without a status`);
    const expiry = typeof status.expirationTimestamp === "string" ? Date.parse(status.expirationTimestamp) : undefined;
    const credential: PluginCredential = { validUntil: 0 };
    if (typeof status.token === "string" && status.token) credential.authorization = `Bearer ${status.token}`;
    if (typeof status.clientCertificateData === "string" && typeof status.clientKeyData === "string") {
      credential.cert = status.clientCertificateData;
      credential.key = status.clientKeyData;
    }
    if (!credential.authorization && !credential.cert) {
      throw new Error(`${what} gave neither a token nor a client certificate`);
    }
    return { credential, expiry: Number.isNaN(expiry) ? undefined : expiry };
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

function validUntil(now: number, expiry: number | undefined): number {
  if (expiry === undefined) return now + RECHECK_MS;
  return Math.min(now + RECHECK_MS, Math.max(now, expiry - EXPIRY_MARGIN_MS));
}

/** The first line of a plugin's complaint, without anything credential-shaped (it may print its token). */
function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return withoutCredentials(text.trim().split("\n")[0] ?? "").slice(0, 300) || "(no message)";
}
