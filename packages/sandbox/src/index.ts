// The sandbox's public API: `startSandbox()` runs an embedded Kubernetes API server emulator
// on 127.0.0.1 (HTTP or HTTPS, optional bearer token / client certificates), writes a
// kubeconfig for it into a fresh temp dir, and exposes faults, stats and direct store reads
// for tests. ServiceAccount tokens from the TokenRequest API are authorized by RBAC (rbac.ts);
// the admin token (or, in "open" mode, no token) is system:masters (who may connect: auth.ts).
// Must never read the machine's kubeconfig or service-account files, nor import kobun's src/
// (kube/, watching/ or any other room): it is the independent model they are tested against
// (test/contracts/imports.test.ts holds the package to it).

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { generatedToken, type SandboxAuth } from "./auth.ts";
import { Faults, type SandboxFaults } from "./faults.ts";
import { SandboxAdmission } from "./admission.ts";
import { Objects } from "./objects.ts";
import { present } from "./write-bodies.ts";
import { fromStored, storeKey } from "./event-store.ts";
import { ResourceRegistry, resourceKey } from "./resources.ts";
import { ServiceAccountTokens } from "./rbac.ts";
import { handle, type ServerContext } from "./server.ts";
import { RequestLog, type RequestRecord, type SandboxStats } from "./stats.ts";
import { Store } from "./store.ts";
import { GarbageCollector } from "./gc.ts";
import { PvcProtection } from "./pvc-protection.ts";
import { sandboxCerts, type SandboxCerts } from "./tls.ts";
import type { WatchStream } from "./watch.ts";
import { checkSandboxOptions } from "./start-options.ts";

export type { SandboxFaults } from "./faults.ts";
export type { DelayTime } from "./watch-delay.ts";
export type { RequestRecord, SandboxStats } from "./stats.ts";
export { ApiStatusError, statusBody, type StatusBody } from "./status.ts";

export interface SandboxOptions {
  /** serve HTTPS with a fresh CA (default false) */
  tls?: boolean;
  /** require `Authorization: Bearer <token>` */
  token?: string;
  /**
   * "token": require a random bearer token made for this start (written only into the 0600
   * kubeconfig); what `kobun dev` uses. "open" (the default without `token`): anyone on
   * 127.0.0.1 is system:masters, for a test's own sandbox called with plain fetch. See auth.ts.
   */
  auth?: SandboxAuth;
  /** with tls: require a client certificate signed by the sandbox CA (verified by the TLS layer) */
  clientCA?: boolean;
  /**
   * What the sandbox presents to every webhook, as kube-apiserver presents what its admission
   * kubeConfigFile gives: a client certificate (PEM cert and key), a bearer token; default none.
   */
  webhookClient?: { cert?: string; key?: string; token?: string };
  /**
   * retained watch events (default 1000); a paged list's later pages are rebuilt across at least
   * 10,000 (until `faults.compact()`), as etcd keeps more history than the watch cache
   */
  historySize?: number;
  /** default 0 = ephemeral */
  port?: number;
  /** BOOKMARK interval for allowWatchBookmarks watches (default 1000 ms; the real server uses ~1 min) */
  bookmarkIntervalMs?: number;
  /** one line per request */
  log?: (line: string) => void;
  /**
   * Serve `shardSelector` on LIST and WATCH, as kube-apiserver with the ShardedListAndWatch
   * feature gate (default true); false answers like a server without it (the parameter is ignored).
   */
  shardSelectors?: boolean;
}

export interface SandboxStore {
  /** stored objects of a resource (any served version), in namespace/name order, optionally in one namespace */
  objects(group: string, plural: string, namespace?: string): any[];
  /** one stored object, or undefined */
  get(group: string, plural: string, namespace: string | undefined, name: string): any | undefined;
  /** the current global resourceVersion */
  resourceVersion(): string;
}

export interface Sandbox {
  url: string;
  kubeconfigPath: string;
  kubeconfig: string;
  ca?: string;
  clientCert?: { cert: string; key: string };
  faults: SandboxFaults;
  stats: SandboxStats;
  waitFor(pred: (r: RequestRecord) => boolean, timeoutMs?: number): Promise<void>;
  store: SandboxStore;
  stop(): Promise<void>;
}

export async function startSandbox(opts: SandboxOptions = {}): Promise<Sandbox> {
  checkSandboxOptions(opts as Record<string, unknown>);
  const token = opts.token ?? (opts.auth === "token" ? generatedToken() : undefined);
  const store = new Store(opts.historySize ?? 1000);
  const registry = new ResourceRegistry();
  const objects = new Objects(store, registry);
  new GarbageCollector(store, objects); // ownerReferences cascade, as kube-controller-manager's collector
  new PvcProtection(store, objects); // a deleted claim's finalizer goes when no Pod mounts it
  const watches = new Set<WatchStream>();
  const requests = new RequestLog();
  const faults = new Faults(store, watches);
  objects.onResourceRemoved = (def) => {
    const key = resourceKey(def.group, def.plural);
    for (const w of [...watches]) if (w.resourceKey === key) w.end(true);
  };
  seed(store, registry, objects);

  const ctx: ServerContext = {
    store, registry, objects, faults, requests, watches, token,
    admission: new SandboxAdmission(store, objects, opts.webhookClient),
    saTokens: new ServiceAccountTokens(store, "https://kubernetes.default.svc.cluster.local"),
    bookmarkIntervalMs: opts.bookmarkIntervalMs ?? 1000, log: opts.log, shardSelectors: opts.shardSelectors ?? true,
  };
  const certs = opts.tls ? sandboxCerts() : undefined;
  const server = serve(ctx, opts, certs);
  const url = `${certs ? "https" : "http"}://127.0.0.1:${server.port}`;

  const dir = mkdtempSync(join(tmpdir(), "kobun-sandbox-"));
  const kubeconfig = kubeconfigFor(url, token, certs, opts.clientCA === true);
  const kubeconfigPath = join(dir, "kubeconfig.yaml");
  writeFileSync(kubeconfigPath, kubeconfig, { mode: 0o600 });

  let stopped = false;
  const sandbox: Sandbox = {
    url,
    kubeconfigPath,
    kubeconfig,
    ...(certs ? { ca: certs.ca } : {}),
    ...(certs && opts.clientCA ? { clientCert: { cert: certs.clientCert, key: certs.clientKey } } : {}),
    faults,
    stats: {
      openWatches: () => watches.size,
      openConnections: () => server.pendingRequests,
      requests: (verb, filter) => requests.count(verb, filter),
      log: requests.log,
      reset: () => { requests.reset(); faults.reset(); },
    },
    waitFor: (pred, timeoutMs) => requests.waitFor(pred, timeoutMs),
    store: storeReads(store, registry),
    async stop() {
      if (stopped) return;
      stopped = true;
      for (const w of [...watches]) w.end(true);
      await server.stop(true);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return sandbox;
}

/** What a fresh cluster has: its namespaces, and the built-ins' watch caches started. */
function seed(store: Store, registry: ResourceRegistry, objects: Objects): void {
  const nsDef = registry.find("", "v1", "namespaces")!;
  for (const name of ["default", "kube-system", "kube-public", "kube-node-lease"]) {
    objects.create(nsDef, "v1", "", { metadata: { name } });
  }
  // the built-ins' watch caches start here (the real server's start at apiserver start)
  for (const def of registry.all()) def.startRV = store.rv;
}

/** The HTTP(S) server on 127.0.0.1; with `clientCA`, the TLS layer verifies client certificates. */
function serve(ctx: ServerContext, opts: SandboxOptions, certs: SandboxCerts | undefined): Bun.Server<undefined> {
  return Bun.serve({
    hostname: "127.0.0.1",
    port: opts.port ?? 0,
    idleTimeout: 0,
    fetch: (req) => handle(ctx, req),
    // a dropped watch errors its body stream on purpose; keep Bun from logging it
    error: () => new Response(null, { status: 500 }),
    ...(certs ? {
      tls: {
        cert: certs.serverCert, key: certs.serverKey,
        ...(opts.clientCA ? { ca: certs.ca, requestCert: true, rejectUnauthorized: true } : {}),
      },
    } : {}),
  });
}

/** The kubeconfig of a sandbox at `url`: its CA, and the token or client certificate it asks for. */
function kubeconfigFor(
  url: string, token: string | undefined, certs: SandboxCerts | undefined, clientCert: boolean,
): string {
  const user: Record<string, string> = {};
  if (token !== undefined) user.token = token;
  if (certs && clientCert) {
    user["client-certificate-data"] = Buffer.from(certs.clientCert).toString("base64");
    user["client-key-data"] = Buffer.from(certs.clientKey).toString("base64");
  }
  const authority = certs ? { "certificate-authority-data": Buffer.from(certs.ca).toString("base64") } : {};
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "sandbox", cluster: { server: url, ...authority } }],
    users: [{ name: "sandbox", user }],
    contexts: [{ name: "sandbox", context: { cluster: "sandbox", user: "sandbox", namespace: "default" } }],
    "current-context": "sandbox",
    preferences: {},
  });
}

/** Direct reads of the store, for tests: copies, never the stored bodies. */
function storeReads(store: Store, registry: ResourceRegistry): SandboxStore {
  return {
    objects(group, plural, namespace) {
      const def = registry.byKey(resourceKey(group, plural));
      return store
        .list(storeKey({ group, plural }), namespace)
        .map(({ body }) => structuredClone(def ? present(def, def.versions[0]!, fromStored(def, body)) : body));
    },
    get(group, plural, namespace, name) {
      const body = fromStored({ group, plural }, store.get(storeKey({ group, plural }), namespace ?? "", name));
      return body === undefined ? undefined : structuredClone(body);
    },
    resourceVersion: () => String(store.rv),
  };
}
