// Peak memory of the example operator's binary handling 10,000 tiny objects from a cold start:
// the figure the memory limit of `kobun manifests`' Deployment is derived from. The binary runs
// under `/usr/bin/time -v` (its "Maximum resident set size" is the peak RSS), as a Deployment's
// container would: `run -n <ns> --standalone`, every object pre-created, stopped by SIGTERM once
// each has its status.create_fn.
//
//   bun bench/memory.ts [--target sandbox|cluster] [--objects N] [--runs N]
//
// sandbox: our API server in this process; cluster: a real kube-apiserver (test/cluster).

import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { KubeClient } from "../src/kube/client.ts";
import type { Resource } from "../src/kube/types.ts";
import { startSandbox } from "@kobun/sandbox";
import { startCluster } from "../test/cluster/cluster.ts";
import { ensureBinary, median, report, root } from "./common.ts";
import { installCrds } from "../test/e2e/harness/kube.ts";

const { values } = parseArgs({ options: { target: { type: "string", default: "sandbox" }, objects: { type: "string", default: "10000" }, runs: { type: "string", default: "3" } } });
const OBJECTS = Number(values.objects);
const RUNS = Number(values.runs);
const EXAMPLES: Resource = { group: "kobun.dev", version: "v1", plural: "kobunexamples", kind: "KobunExample", namespaced: true, statusSubresource: true };

async function server(): Promise<{ kubeconfigPath: string; stop(): Promise<void> }> {
  if (values.target === "cluster") return startCluster();
  if (values.target === "sandbox") return startSandbox();
  throw new Error(`--target: sandbox or cluster, got ${values.target}`);
}

/** Peak RSS in KiB of one cold run of the binary that handles every object in `namespace`. */
async function peakOfOneRun(binary: string, kubeconfig: string, client: KubeClient, namespace: string): Promise<{ kib: number; ms: number }> {
  const t0 = performance.now();
  const timed = Bun.spawn(["/usr/bin/time", "-v", binary, "run", "--kubeconfig", kubeconfig, "-n", namespace, "--standalone", "-q"], {
    env: { PATH: process.env.PATH ?? "", HOME: "/nonexistent" }, stdout: "ignore", stderr: "pipe",
  });
  const stderr = new Response(timed.stderr).text();
  const deadline = Date.now() + 300_000;
  // A LIST every second: the figure is the operator's, the poll costs only the server.
  for (;;) {
    const list = await client.list(EXAMPLES, { namespace });
    if (list.items.filter((o) => o.status?.create_fn).length >= OBJECTS) break;
    if (Date.now() > deadline) throw new Error("bench: objects not handled within 300 s");
    await Bun.sleep(1000);
  }
  const ms = performance.now() - t0;
  const child = Number(readFileSync(`/proc/${timed.pid}/task/${timed.pid}/children`, "utf8").trim());
  process.kill(child, "SIGTERM");
  await timed.exited;
  const kib = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(await stderr)?.[1]);
  if (!kib) throw new Error(`bench: no peak RSS from /usr/bin/time:\n${await stderr}`);
  return { kib, ms };
}

const binary = ensureBinary();
const target = await server();
const client = await KubeClient.connect({ kubeconfig: target.kubeconfigPath, retries: 2 });
try {
  await installCrds(client, `${root}/handlers/kobunexample.crd.yaml`);
  const peaks: number[] = [];
  const times: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const namespace = `mem-${run}-${Date.now().toString(36)}`;
    await client.create({ group: "", version: "v1", plural: "namespaces", kind: "Namespace", namespaced: false, statusSubresource: true }, null,
      { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
    for (let i = 0; i < OBJECTS; i += 50) {
      await Promise.all(Array.from({ length: Math.min(50, OBJECTS - i) }, (_, j) => client.create(EXAMPLES, namespace, {
        apiVersion: "kobun.dev/v1", kind: "KobunExample", metadata: { name: `tiny-${i + j}` }, spec: { size: 1 },
      })));
    }
    const { kib, ms } = await peakOfOneRun(binary, target.kubeconfigPath, client, namespace);
    peaks.push(kib / 1024);
    times.push(ms);
  }
  report("memory", {
    target: values.target, objects: OBJECTS, runs: RUNS,
    peakRssMiB: peaks.map((p) => Math.round(p)), medianPeakRssMiB: Math.round(median(peaks)), maxPeakRssMiB: Math.round(Math.max(...peaks)),
    allHandledMs: times.map((t) => Math.round(t)),
  });
} finally {
  client.close();
  await target.stop();
}
