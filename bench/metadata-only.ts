// kobun.yaml's resources.<key>.metadataOnly, measured: an operator with one on.event handler
// on ConfigMaps receives N pre-created objects (1 KiB of random data each, like a small spec), once
// watched in full and once metadata-only (PartialObjectMetadata). Per mode: the operator
// process's peak RSS (`/usr/bin/time -v`), its RSS after a full GC once every object arrived,
// and the bytes the API server sent it (a counting TCP proxy in between: on the wire, so after
// kube-apiserver's gzip of large answers; the sandbox does not compress), medians of --runs.
//
//   bun bench/metadata-only.ts [--target sandbox|cluster] [--objects N] [--runs N]
//
// The operator runs from source in a child process (the same code for both modes: only the
// difference between them is the figure); the API server runs in this process (sandbox) or
// is a real kube-apiserver (test/cluster).

import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { parseConfigText, resolveSettings } from "../src/config/index.ts";
import { Registry } from "../src/declaring/index.ts";
import { KubeClient } from "../src/kube/client.ts";
import type { Resource } from "../src/kube/types.ts";
import { run } from "../src/runtime/operator.ts";
import { startSandbox } from "@kobun/sandbox";
import { memorySink, Logger } from "../src/util/log.ts";
import { startCluster } from "../test/cluster/cluster.ts";
import { startTcpProxy } from "../test/runtime/tcp-proxy.ts";
import { median, report, round, saveResults } from "./common.ts";

const CONFIGMAPS: Resource = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false };
const NAMESPACES: Resource = { group: "", version: "v1", plural: "namespaces", kind: "Namespace", namespaced: false, statusSubresource: true };
const MiB = 1024 * 1024;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { target: { type: "string", default: "sandbox" }, objects: { type: "string", default: "10000" }, runs: { type: "string", default: "3" }, child: { type: "boolean", default: false } },
});

/** The operator: runs until it received `objects` distinct ConfigMaps, then prints its RSS after a full GC. */
async function child([kubeconfig, namespace, mode, objects]: string[]): Promise<void> {
  const settings = resolveSettings({
    fileData: parseConfigText(`peering: { standalone: true }\nnamespaces: { include: [${namespace}] }\nresources:\n  v1/configmaps: { metadataOnly: ${mode === "metadataOnly"} }\n`, "bench"),
  });
  const seen = new Set<string>();
  const { promise: all, resolve } = Promise.withResolvers<void>();
  const registry = new Registry();
  registry.on.event("v1/configmaps", ({ name }) => {
    seen.add(name);
    if (seen.size >= Number(objects)) resolve();
  }, { id: "count" });
  const client = await KubeClient.connect({ kubeconfig: kubeconfig! });
  const stop = new AbortController();
  const running = run({ signal: stop.signal, settings, client, registry, logger: new Logger(memorySink("error")) });
  await Promise.race([all, running]);
  Bun.gc(true);
  console.log(JSON.stringify({ rss: process.memoryUsage().rss }));
  stop.abort();
  await running;
  client.close();
}

async function server(): Promise<{ kubeconfigPath: string; stop(): Promise<void> }> {
  if (values.target === "cluster") return startCluster({ controllerManager: false });
  if (values.target === "sandbox") return startSandbox();
  throw new Error(`--target: sandbox or cluster, got ${values.target}`);
}

async function populate(client: KubeClient, namespace: string, n: number): Promise<void> {
  await client.create(NAMESPACES, null, { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
  // Random, so that a server compressing its answers (kube-apiserver gzips large ones) cannot shrink it away.
  const payload = () => Buffer.from(crypto.getRandomValues(new Uint8Array(768))).toString("base64");
  for (let i = 0; i < n; i += 100) {
    await Promise.all(Array.from({ length: Math.min(100, n - i) }, (_, j) =>
      client.create(CONFIGMAPS, namespace, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `cm-${i + j}`, labels: { app: "bench" } }, data: { payload: payload() } })));
  }
}

/** One operator run through a fresh counting proxy: peak and settled RSS (MiB), bytes received (MiB). */
async function once(kubeconfigPath: string, namespace: string, mode: string, n: number): Promise<{ peak: number; settled: number; received: number }> {
  const original = readFileSync(kubeconfigPath, "utf8");
  const server = /server:\s*(\S+)/.exec(original)?.[1];
  if (!server) throw new Error(`bench: no server in ${kubeconfigPath}`);
  const proxy = startTcpProxy(new URL(server));
  const kubeconfig = join(mkdtempSync(join(tmpdir(), "kobun-bench-meta-")), "kubeconfig");
  writeFileSync(kubeconfig, original.replace(server, proxy.url));
  try {
    const timed = Bun.spawn(["/usr/bin/time", "-v", process.execPath, import.meta.path, "--child", kubeconfig, namespace, mode, String(n)], {
      env: { PATH: process.env.PATH ?? "", HOME: "/nonexistent" }, stdout: "pipe", stderr: "pipe",
    });
    const [stdout, stderr, code] = await Promise.all([new Response(timed.stdout).text(), new Response(timed.stderr).text(), timed.exited]);
    if (code !== 0) throw new Error(`bench: the operator exited ${code}:\n${stderr}`);
    const kib = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(stderr)?.[1]);
    const settled = (JSON.parse(stdout.trim().split("\n").pop()!) as { rss: number }).rss;
    return { peak: kib / 1024, settled: settled / MiB, received: proxy.bytesReceived / MiB };
  } finally {
    proxy.close();
  }
}

if (values.child) {
  await child(positionals);
} else {
  const n = Number(values.objects);
  const runs = Number(values.runs);
  const target = await server();
  const client = await KubeClient.connect({ kubeconfig: target.kubeconfigPath, retries: 2 });
  try {
    const namespace = "bench-metadata-only";
    await populate(client, namespace, n);
    const figures: Record<string, number> = {};
    for (const mode of ["full", "metadataOnly"]) {
      const results = [];
      for (let i = 0; i < runs; i++) results.push(await once(target.kubeconfigPath, namespace, mode, n));
      figures[`${mode}PeakRssMiB`] = round(median(results.map((r) => r.peak)), 1);
      figures[`${mode}SettledRssMiB`] = round(median(results.map((r) => r.settled)), 1);
      figures[`${mode}ReceivedMiB`] = round(median(results.map((r) => r.received)), 2);
    }
    const ratios = {
      peakRatio: round(figures.metadataOnlyPeakRssMiB! / figures.fullPeakRssMiB!), receivedRatio: round(figures.metadataOnlyReceivedMiB! / figures.fullReceivedMiB!),
    };
    report("metadata-only", { target: values.target, objects: n, objectDataBytes: 1024, runs, ...figures, ...ratios });
    saveResults(`metadata-only-${values.target}`, { objects: n, objectDataBytes: 1024, runs, ...figures, ...ratios });
  } finally {
    client.close();
    await target.stop();
  }
}
