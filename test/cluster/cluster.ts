// A real kube-apiserver + etcd for tests, like controller-runtime's envtest.
//
//   const cluster = await startCluster();
//   ... talk to cluster.url with `Authorization: Bearer ${cluster.token}`,
//       or point a client at cluster.kubeconfigPath ...
//   await cluster.stop();
//
// Binaries come from test/cluster/build.sh (built from Go modules, cached per
// Kubernetes version outside the repo). A kube-controller-manager runs only its
// garbage-collector and namespace controllers (children of a deleted owner go, deleted
// namespaces are emptied and removed); no scheduler or kubelet: nothing runs Pods or
// creates ServiceAccounts.
// Only the node:* modules and Bun are used.

import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";

export interface Cluster {
  /** https://127.0.0.1:PORT of the kube-apiserver. */
  url: string;
  /** A kubeconfig (server, CA data, bearer token; namespace "default") in the cluster's temp dir. */
  kubeconfigPath: string;
  /** Bearer token of user "admin" in group system:masters. */
  token: string;
  /** PEM of the apiserver's self-signed serving certificate chain (its SANs include 127.0.0.1); use it as CA. */
  caPem: string;
  /** Temp dir holding the etcd data, certs, kubeconfig and the processes' logs (etcd.log, kube-apiserver.log, kube-controller-manager.log). */
  dir: string;
  /**
   * Start kube-controller-manager now, when it was started with `controllerManager: "on-call"`
   * (a no-op otherwise, and when already started): call it after installing CRDs, so that the
   * garbage collector's first discovery sees them (it re-reads discovery only every 30 s, so
   * an owner of a kind created after it started would go unnoticed that long).
   */
  startControllers(): Promise<void>;
  /** SIGKILL the kube-apiserver (a crashed or lost control-plane member) and wait for it to exit; etcd and the controllers stay. */
  stopApiServer(): Promise<void>;
  /** Start the kube-apiserver again, on its port and with its certificate (its watch cache begins anew); once /readyz is 200. */
  startApiServer(): Promise<void>;
  /**
   * Another kube-apiserver on the same etcd, on a port of its own (an HA control plane's second member), with the
   * same certificate and token: its URL once /readyz is 200; stop() ends it (stop() of the cluster too).
   */
  spareApiServer(): Promise<{ url: string; stop(): Promise<void> }>;
  /** SIGKILL every process, last started first, wait for them to exit, remove the temp dir. Idempotent. */
  stop(): Promise<void>;
}

export interface StartClusterOptions {
  /** Root of the binary cache; binaries live in `<cacheDir>/<version>/`. Default: $KOBUN_CLUSTER_CACHE or ~/.cache/kobun/cluster. */
  cacheDir?: string;
  /** Bound on the time to get etcd and the apiserver ready, in ms. Default 60000. */
  timeoutMs?: number;
  /** Extra kube-apiserver flags, e.g. ["--feature-gates=Foo=true"]; later flags win. */
  apiserverArgs?: string[];
  /** Run kube-controller-manager (garbage collector and namespace controllers): true (default) before startCluster returns, "on-call" on `startControllers()`, false never. */
  controllerManager?: boolean | "on-call";
  /** Also copy both processes' output to this process's stderr. Default false (it goes to files in `dir`). */
  verbose?: boolean;
}

const here = import.meta.dir;

/** The Kubernetes version build.sh builds (test/cluster/VERSION), e.g. "v1.37.2". */
export const kubernetesVersion: string = readFileSync(join(here, "VERSION"), "utf8").trim();

/** Directory that holds (or will hold) `kube-apiserver` and `etcd` for `kubernetesVersion`. */
export function binDir(cacheDir?: string): string {
  const root = cacheDir ?? process.env.KOBUN_CLUSTER_CACHE ?? join(homedir(), ".cache", "kobun", "cluster");
  return join(root, kubernetesVersion);
}

/** Run build.sh (a no-op when the binaries are already built) and return the directory holding them. */
export function buildBinaries(cacheDir?: string): string {
  const env = { ...process.env };
  if (cacheDir !== undefined) env.KOBUN_CLUSTER_CACHE = cacheDir;
  const r = spawnSync(join(here, "build.sh"), [], { env, stdio: ["ignore", "pipe", "inherit"], encoding: "utf8" });
  if (r.status !== 0) throw new Error(`test/cluster/build.sh failed (exit ${r.status ?? r.signal})`);
  return r.stdout.trim().split("\n").pop() ?? binDir(cacheDir);
}

/** Distinct free TCP ports on 127.0.0.1 (held open together so they differ, then released). */
async function freePorts(n: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    const ports: number[] = [];
    for (let i = 0; i < n; i++) {
      const s = createServer();
      servers.push(s);
      await new Promise<void>((resolve, reject) => {
        s.once("error", reject);
        s.listen(0, "127.0.0.1", () => resolve());
      });
      const addr = s.address();
      if (addr === null || typeof addr === "string") throw new Error("unexpected listen address");
      ports.push(addr.port);
    }
    return ports;
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
}

function run(cmd: string, args: string[]): void {
  const r = spawnSync(cmd, args, { stdio: ["ignore", "ignore", "pipe"], encoding: "utf8" });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} failed: ${r.stderr}`);
}

function tail(path: string, lines = 30): string {
  try {
    return readFileSync(path, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

type Proc = ReturnType<typeof Bun.spawn>;

/**
 * Starts a control plane; a port taken between its probe and the bind (other suites and spare
 * control planes open listeners meanwhile) is retried with fresh ports, twice at most.
 */
export async function startCluster(opts: StartClusterOptions = {}): Promise<Cluster> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startClusterOnce(opts);
    } catch (error) {
      if (attempt >= 3 || !/address already in use/.test(error instanceof Error ? error.message : String(error))) throw error;
    }
  }
}

async function startClusterOnce(opts: StartClusterOptions): Promise<Cluster> {
  const bin = binDir(opts.cacheDir);
  const apiserverBin = join(bin, "kube-apiserver");
  const controllerManagerBin = join(bin, "kube-controller-manager");
  const etcdBin = join(bin, "etcd");
  const withControllers = opts.controllerManager ?? true;
  if (!existsSync(apiserverBin) || !existsSync(etcdBin) || (withControllers && !existsSync(controllerManagerBin))) {
    throw new Error(`kube-apiserver/kube-controller-manager/etcd not found in ${bin}; run test/cluster/build.sh first (cold build takes several minutes)`);
  }
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const deadline = Date.now() + timeoutMs;

  const dir = mkdtempSync(join(tmpdir(), "kobun-cluster-"));
  const certDir = join(dir, "certs");
  const [etcdClientPort, etcdPeerPort, apiPort] = (await freePorts(3)) as [number, number, number];
  const url = `https://127.0.0.1:${apiPort}`;
  const token = randomBytes(24).toString("hex");

  const procs: Proc[] = [];
  const watchdogs: Proc[] = [];
  const killAll = () => {
    for (const p of procs) if (p.exitCode === null && p.signalCode === null) p.kill("SIGKILL");
  };
  // Synchronous last resort when this process exits without calling stop().
  process.on("exit", killAll);

  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      // SIGKILL: the cluster goes with its temp dir, so nothing needs a graceful shutdown (after
      // the controller-manager's watches, the apiserver's SIGTERM took ~1.1 s, on every stop).
      // Apiserver before etcd, so it does not log etcd's absence.
      for (const p of [...procs].reverse()) {
        if (p.exitCode === null && p.signalCode === null) p.kill("SIGKILL");
        await p.exited;
      }
      for (const w of watchdogs) w.kill("SIGKILL");
      await Promise.all(watchdogs.map((w) => w.exited));
      process.off("exit", killAll);
      rmSync(dir, { recursive: true, force: true });
    })());

  const spawn = (name: string, cmd: string[]): Proc => {
    const log = Bun.file(join(dir, `${name}.log`));
    const p = Bun.spawn(cmd, {
      cwd: dir,
      stdin: "ignore",
      stdout: opts.verbose ? "inherit" : log,
      stderr: opts.verbose ? "inherit" : log,
    });
    procs.push(p);
    // If this process dies without running exit handlers (SIGKILL, unhandled signal), this
    // watchdog shell notices within a second, takes the child down and removes the temp dir.
    const w = Bun.spawn(
      [
        "sh",
        "-c",
        `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; ` +
          `kill -TERM ${p.pid} 2>/dev/null; sleep 5; kill -KILL ${p.pid} 2>/dev/null; rm -rf '${dir}'`,
      ],
      { stdin: "ignore", stdout: "ignore", stderr: "ignore" },
    );
    watchdogs.push(w);
    // Don't let a forgotten cluster keep the test process alive (the exit hook and watchdog clean up).
    p.unref();
    w.unref();
    return p;
  };

  const fail = async (what: string, logName: string): Promise<never> => {
    const logPath = join(dir, `${logName}.log`);
    const msg = `${what}\n--- last lines of ${logName}.log ---\n${tail(logPath)}`;
    await stop();
    throw new Error(msg);
  };

  try {
    // Service-account signing key pair (the apiserver refuses to start without one).
    const saKey = join(dir, "sa.key");
    const saPub = join(dir, "sa.pub");
    run("openssl", ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", saKey]);
    run("openssl", ["pkey", "-in", saKey, "-pubout", "-out", saPub]);
    const tokenFile = join(dir, "tokens.csv");
    writeFileSync(tokenFile, `${token},admin,admin-uid,"system:masters"\n`, { mode: 0o600 });

    const etcd = spawn("etcd", [
      etcdBin,
      "--name=default",
      `--data-dir=${join(dir, "etcd")}`,
      "--unsafe-no-fsync=true",
      `--listen-client-urls=http://127.0.0.1:${etcdClientPort}`,
      `--advertise-client-urls=http://127.0.0.1:${etcdClientPort}`,
      `--listen-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
      `--initial-cluster=default=http://127.0.0.1:${etcdPeerPort}`,
      "--initial-cluster-state=new",
      "--log-level=warn",
    ]);

    // Wait for etcd to serve before starting the apiserver, so failures are attributed correctly.
    for (;;) {
      if (etcd.exitCode !== null || etcd.signalCode !== null) await fail(`etcd exited (${etcd.exitCode ?? etcd.signalCode})`, "etcd");
      if (Date.now() > deadline) await fail(`etcd not healthy within ${timeoutMs}ms`, "etcd");
      try {
        const r = await fetch(`http://127.0.0.1:${etcdClientPort}/health`, { signal: AbortSignal.timeout(1000) });
        if (r.ok && ((await r.json()) as { health?: string }).health === "true") break;
      } catch {}
      await sleep(50);
    }

    const apiserverArgs = (port: number) => [
      apiserverBin,
      `--etcd-servers=http://127.0.0.1:${etcdClientPort}`,
      `--cert-dir=${certDir}`,
      `--secure-port=${port}`,
      "--bind-address=127.0.0.1",
      "--advertise-address=127.0.0.1",
      // No kubelet/controllers: don't maintain the `kubernetes` service endpoints.
      "--endpoint-reconciler-type=none",
      "--service-cluster-ip-range=10.0.0.0/24",
      "--service-account-issuer=https://127.0.0.1",
      `--service-account-key-file=${saPub}`,
      `--service-account-signing-key-file=${saKey}`,
      "--authorization-mode=RBAC",
      `--token-auth-file=${tokenFile}`,
      "--allow-privileged=true",
      // As envtest: no controller-manager creates default ServiceAccounts, so Pods would be rejected.
      "--disable-admission-plugins=ServiceAccount",
      ...(opts.apiserverArgs ?? []),
    ];
    // Each start of an apiserver logs to a file of its own (a restart must not truncate the first one's log).
    let launches = 0;
    const launchApiServer = async (port: number, until: number): Promise<{ proc: Proc; caPem: string }> => {
      const name = launches++ === 0 ? "kube-apiserver" : `kube-apiserver-${launches}`;
      const proc = spawn(name, apiserverArgs(port));
      // The serving cert is self-signed into --cert-dir by the first start (later ones reuse it); trust exactly it.
      const certFile = join(certDir, "apiserver.crt");
      let pem = "";
      for (;;) {
        if (proc.exitCode !== null || proc.signalCode !== null) await fail(`${name} exited (${proc.exitCode ?? proc.signalCode})`, name);
        if (Date.now() > until) await fail(`${name} not ready within ${timeoutMs}ms`, name);
        if (!pem && existsSync(certFile)) pem = readFileSync(certFile, "utf8");
        if (pem) {
          try {
            const r = await fetch(`https://127.0.0.1:${port}/readyz`, {
              headers: { authorization: `Bearer ${token}` },
              tls: { ca: pem },
              signal: AbortSignal.timeout(2000),
            });
            if (r.status === 200) return { proc, caPem: pem };
          } catch {}
        }
        await sleep(100);
      }
    };
    const first = await launchApiServer(apiPort, deadline);
    let apiserver = first.proc;
    const caPem = first.caPem;

    // The system-namespaces controller creates `default` shortly after readyz; create it ourselves if it lags.
    const api = (path: string, init: RequestInit = {}) =>
      fetch(`${url}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        tls: { ca: caPem },
      });
    for (;;) {
      const r = await api("/api/v1/namespaces/default");
      if (r.ok) break;
      if (Date.now() > deadline) await fail(`namespace "default" missing after ${timeoutMs}ms (HTTP ${r.status})`, "kube-apiserver");
      if (r.status === 404) {
        const c = await api("/api/v1/namespaces", {
          method: "POST",
          body: JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name: "default" } }),
        });
        if (c.ok || c.status === 409) continue;
      }
      await sleep(100);
    }

    const kubeconfigPath = join(dir, "kubeconfig");
    const b64 = Buffer.from(caPem).toString("base64");
    writeFileSync(
      kubeconfigPath,
      [
        "apiVersion: v1",
        "kind: Config",
        "clusters:",
        "- name: kobun-test",
        "  cluster:",
        `    server: ${url}`,
        `    certificate-authority-data: ${b64}`,
        "users:",
        "- name: admin",
        "  user:",
        `    token: ${token}`,
        "contexts:",
        "- name: kobun-test",
        "  context:",
        "    cluster: kobun-test",
        "    user: admin",
        "    namespace: default",
        "current-context: kobun-test",
        "",
      ].join("\n"),
      { mode: 0o600 },
    );

    let controllersStarted: Promise<void> | undefined;
    const startControllersNow = () =>
      // Its port is probed when it starts (a spare's may start minutes after the spare did).
      (controllersStarted ??= startControllers({ spawn, fail, bin: controllerManagerBin, dir, kubeconfigPath, timeoutMs }));
    if (withControllers === true) await startControllersNow();

    const stopApiServer = async (): Promise<void> => {
      if (apiserver.exitCode === null && apiserver.signalCode === null) apiserver.kill("SIGKILL");
      await apiserver.exited;
    };
    const startApiServer = async (): Promise<void> => {
      if (apiserver.exitCode === null && apiserver.signalCode === null) throw new Error("startApiServer: the kube-apiserver is running");
      ({ proc: apiserver } = await launchApiServer(apiPort, Date.now() + timeoutMs));
    };
    const spareApiServer = async (): Promise<{ url: string; stop(): Promise<void> }> => {
      const [port] = (await freePorts(1)) as [number];
      const { proc } = await launchApiServer(port, Date.now() + timeoutMs);
      return {
        url: `https://127.0.0.1:${port}`,
        stop: async () => {
          if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
          await proc.exited;
        },
      };
    };
    return {
      url, kubeconfigPath, token, caPem, dir, stop, stopApiServer, startApiServer, spareApiServer,
      startControllers: () => (withControllers ? startControllersNow() : Promise.resolve()),
    };
  } catch (e) {
    await stop();
    throw e;
  }
}

/**
 * kube-controller-manager with only the garbage collector and the namespace controller (what
 * ownerReferences and namespace deletion need; no service-account tokens, no leader election),
 * serving /healthz on its own free port; ready once that answers 200 (within its own timeoutMs).
 */
async function startControllers(o: {
  spawn: (name: string, cmd: string[]) => Proc;
  fail: (what: string, logName: string) => Promise<never>;
  bin: string; dir: string; kubeconfigPath: string; timeoutMs: number;
}): Promise<void> {
  const deadline = Date.now() + o.timeoutMs;
  const certDir = join(o.dir, "kcm-certs");
  const certFile = join(certDir, "kube-controller-manager.crt");
  const logFile = join(o.dir, "kube-controller-manager.log");
  // The free port is probed, released, then bound by kube-controller-manager: another process may
  // take it in between (a CI run saw "bind: address already in use"), so a few new ports are tried.
  for (let attempt = 1; ; attempt++) {
    const [port] = (await freePorts(1)) as [number];
    const kcm = o.spawn("kube-controller-manager", [
      o.bin,
      `--kubeconfig=${o.kubeconfigPath}`,
      `--authentication-kubeconfig=${o.kubeconfigPath}`,
      `--authorization-kubeconfig=${o.kubeconfigPath}`,
      "--controllers=garbagecollector,namespace",
      "--leader-elect=false",
      "--bind-address=127.0.0.1",
      `--secure-port=${port}`,
      `--cert-dir=${certDir}`,
      "--v=1",
    ]);
    for (;;) {
      if (kcm.exitCode !== null || kcm.signalCode !== null) {
        const portTaken = existsSync(logFile) && readFileSync(logFile, "utf8").includes("address already in use");
        if (portTaken && attempt < 3) break;
        await o.fail(`kube-controller-manager exited (${kcm.exitCode ?? kcm.signalCode})`, "kube-controller-manager");
      }
      if (Date.now() > deadline) await o.fail(`kube-controller-manager not healthy within ${o.timeoutMs}ms`, "kube-controller-manager");
      if (existsSync(certFile)) {
        try {
          const r = await fetch(`https://127.0.0.1:${port}/healthz`, { tls: { ca: readFileSync(certFile, "utf8") }, signal: AbortSignal.timeout(2000) });
          if (r.status === 200) return;
        } catch {}
      }
      await sleep(100);
    }
  }
}
