// The API servers the e2e suite runs against, behind one interface:
//   sandbox  — our emulator (packages/sandbox), started in this test process on 127.0.0.1;
//   cluster  — a real etcd + kube-apiserver (test/cluster), or any cluster the user names
//              with KOBUN_E2E_KUBECONFIG=/path (explicit file only; never the default one).
// Scenarios see only `kubeconfigPath` and a KubeClient: the same code runs on both.

import { existsSync } from "node:fs";
import { KubeClient } from "../../../src/kube/client.ts";
import { startSandbox, type SandboxOptions } from "@kobun/sandbox";
import { binDir, startCluster, type Cluster } from "../../cluster/cluster.ts";
import { installCrds } from "./kube.ts";

export type TargetName = "sandbox" | "cluster";

export interface Target {
  name: TargetName;
  /** Human description for failure messages: where the API server is. */
  describe: string;
  url: string;
  kubeconfigPath: string;
  client: KubeClient;
  stop(): Promise<void>;
}

/** Which targets this run covers: KOBUN_E2E_TARGET=sandbox|cluster|sandbox,cluster (default both). */
export function selectedTargets(): TargetName[] {
  const raw = process.env.KOBUN_E2E_TARGET?.trim() || "sandbox,cluster";
  const names = raw.split(",").map((s) => s.trim()).filter(Boolean);
  for (const n of names) {
    if (n !== "sandbox" && n !== "cluster") throw new Error(`KOBUN_E2E_TARGET: unknown target ${JSON.stringify(n)} (sandbox, cluster)`);
  }
  return names as TargetName[];
}

/** How a file wants its target started: CRD files to install, extra kube-apiserver flags (feature gates), sandbox options. */
export interface TargetOptions {
  crds?: string[];
  apiserverArgs?: string[];
  sandbox?: SandboxOptions;
}

/** The target, with `crds` installed and served. */
export async function startTarget(name: TargetName, options: TargetOptions = {}): Promise<Target> {
  const target = await startServer(name, options);
  try {
    for (const crd of options.crds ?? []) await installCrds(target.client, crd);
    await target.ready?.();
    return target;
  } catch (e) {
    await target.stop().catch(() => {});
    throw e;
  }
}

async function startServer(name: TargetName, options: TargetOptions): Promise<Target & { ready?(): Promise<void> }> {
  if (name === "sandbox") {
    // A bounded history, as every real server has (scenario 7 churns past it).
    const sandbox = await startSandbox({ historySize: 200, ...options.sandbox });
    const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath, retries: 2 });
    return {
      name, describe: `sandbox at ${sandbox.url}`, url: sandbox.url, kubeconfigPath: sandbox.kubeconfigPath, client,
      async stop() { client.close(); await sandbox.stop(); },
    };
  }
  const named = process.env.KOBUN_E2E_KUBECONFIG;
  if (named) {
    if (!existsSync(named)) throw new Error(`KOBUN_E2E_KUBECONFIG=${named}: no such file`);
    const client = await KubeClient.connect({ kubeconfig: named, retries: 2 });
    return { name, describe: `cluster of ${named} (${client.server})`, url: client.server, kubeconfigPath: named, client, async stop() { client.close(); } };
  }
  if (!existsSync(`${binDir()}/kube-apiserver`)) {
    throw new Error(
      `the real API server is not available: no kube-apiserver in ${binDir()}. ` +
        "Run test/cluster/build.sh (or `npm run test:e2e`, which builds it), or set KOBUN_E2E_KUBECONFIG=/path/to/kubeconfig.",
    );
  }
  const cluster = await freshCluster(options.apiserverArgs ?? []);
  const client = await KubeClient.connect({ kubeconfig: cluster.kubeconfigPath, retries: 2 });
  return {
    name, describe: `kube-apiserver at ${cluster.url} (logs in ${cluster.dir})`, url: cluster.url, kubeconfigPath: cluster.kubeconfigPath, client,
    // The controllers after the CRDs: the garbage collector's first discovery then sees them.
    ready: () => cluster.startControllers(),
    async stop() { client.close(); await cluster.stop(); },
  };
}

/**
 * A control plane started while the previous file runs, for the next file that asks for the
 * same flags: every file still gets one of its own, fresh, without waiting 5–9 s for it. An
 * unclaimed spare goes at exit (cluster.ts's exit hook and watchdogs).
 */
const spares = new Map<string, Promise<Cluster>>();

function freshCluster(apiserverArgs: string[]): Promise<Cluster> {
  const key = JSON.stringify(apiserverArgs);
  const start = () => startCluster({ apiserverArgs, controllerManager: "on-call" });
  const claimed = spares.get(key) ?? start();
  // Started once the claimed one is up, so that two never boot at once.
  const spare = claimed.catch(() => {}).then(start);
  spare.catch(() => {}); // a failed spare fails the file that claims it, not the process
  spares.set(key, spare);
  return claimed;
}
