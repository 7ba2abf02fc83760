// Bench: N pre-existing objects, one create handler. Measures the time until all are handled,
// PATCH requests per object (counted by the API server), and operator CPU per object
// (process.cpuUsage over the handling phase, nothing subtracted); and the same figures for a
// bare loop of the same PATCHes with the client at the same concurrency (the floor).
// The sandbox API server runs in a child process so that its CPU is not counted.
//
//   bun bench/handling.ts [N ...]          (default: 1000 10000)
// Prints one JSON document.

import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { resolveSettings } from "../src/config/index.ts";
import { KubeClient } from "../src/kube/client.ts";
import { resourcePath, type Resource } from "../src/kube/types.ts";
import { Reconciler } from "../src/reconciling/reconciler.ts";
import { Registry } from "../src/declaring/registry.ts";
import { Watcher } from "../src/watching/watcher.ts";
import { lineReader } from "./common.ts";

const CONCURRENCY = 100;
const CRDS: Resource = { group: "apiextensions.k8s.io", version: "v1", plural: "customresourcedefinitions", kind: "CustomResourceDefinition", namespaced: false, statusSubresource: true };
const NAMESPACES: Resource = { group: "", version: "v1", plural: "namespaces", kind: "Namespace", namespaced: false, statusSubresource: true };

if (process.argv[2] === "--sandbox-child") await sandboxChild();
else await main();

/** The child: a sandbox that prints its kubeconfig path and answers "patches <plural>" on stdin. */
async function sandboxChild(): Promise<void> {
  const { startSandbox } = await import("@kobun/sandbox");
  const sandbox = await startSandbox({ historySize: 100_000 });
  console.log(JSON.stringify({ kubeconfigPath: sandbox.kubeconfigPath }));
  for await (const line of console) {
    const [cmd, plural] = line.trim().split(" ");
    if (cmd === "patches") console.log(JSON.stringify({ patches: sandbox.stats.requests("patch", { plural }) }));
    if (cmd === "stop") break;
  }
  await sandbox.stop();
  process.exit(0);
}

async function main(): Promise<void> {
  const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0);
  const child = Bun.spawn([process.execPath, import.meta.path, "--sandbox-child"], { stdin: "pipe", stdout: "pipe", stderr: "inherit" });
  const lines = lineReader(child.stdout);
  const { kubeconfigPath } = JSON.parse(await lines.next());
  const ask = async (cmd: string) => {
    child.stdin.write(cmd + "\n");
    child.stdin.flush();
    return JSON.parse(await lines.next());
  };
  const client = await KubeClient.connect({ kubeconfig: kubeconfigPath });
  const crd = parse(readFileSync(new URL("../handlers/kobunexample.crd.yaml", import.meta.url), "utf8"));
  const plainCrd = structuredClone(crd);
  plainCrd.metadata.name = "kobunplains.kobun.dev";
  plainCrd.spec.names = { kind: "KobunPlain", plural: "kobunplains", singular: "kobunplain" };
  delete plainCrd.spec.versions[0].subresources;
  await client.create(CRDS, null, crd);
  await client.create(CRDS, null, plainCrd);

  const results: Record<string, unknown>[] = [];
  for (const n of sizes.length ? sizes : [1000, 10000]) {
    for (const def of [crd, plainCrd]) {
      const resource = await client.resolve(`${def.spec.names.plural}.kobun.dev/v1`);
      results.push(await benchOne(client, resource, def.spec.names.kind, n, ask));
    }
  }
  console.log(JSON.stringify({ concurrency: CONCURRENCY, results }, null, 2));
  child.stdin.write("stop\n");
  child.stdin.flush();
  await child.exited;
  client.close();
}

async function benchOne(client: KubeClient, resource: Resource, kind: string, n: number, ask: (cmd: string) => Promise<any>) {
  const tag = `${resource.plural.slice(5, 10)}-${n}`;
  const floorNs = `floor-${tag}`;
  const opNs = `op-${tag}`;
  for (const ns of [floorNs, opNs]) {
    await client.create(NAMESPACES, null, { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
    await pool(n, (i) => client.create(resource, ns, { apiVersion: "kobun.dev/v1", kind, metadata: { name: `obj-${i}`, namespace: ns }, spec: { i } }));
  }
  Bun.gc(true);

  // The floor: the same single PATCH per object the operator sends, in a bare loop.
  const sub = resource.statusSubresource;
  const floorPatch = (ns: string, i: number) => {
    const status = { create_fn: { message: `hello obj-${i}` } };
    return sub
      ? client.patch(resource, ns, `obj-${i}`, { status: { ...status, kobun: { lastHandledConfiguration: `{"spec":{"i":${i}}}` } } }, { subresource: "status" })
      : client.patch(resource, ns, `obj-${i}`, { status, metadata: { annotations: { "kobun.dev/last-handled-configuration": `{"spec":{"i":${i}}}` } } });
  };
  const floorBefore = (await ask(`patches ${resource.plural}`)).patches;
  let cpu = process.cpuUsage();
  let t0 = performance.now();
  await pool(n, (i) => floorPatch(floorNs, i));
  const floorWall = performance.now() - t0;
  const floorCpu = cpuMs(process.cpuUsage(cpu));
  const floorPatches = (await ask(`patches ${resource.plural}`)).patches - floorBefore;
  Bun.gc(true);

  // The same floor with a bare watch open on those objects and read to the end: any controller
  // must watch, and the server pays for every event it streams. Fresh objects, same count.
  const watchedNs = `watched-${tag}`;
  await client.create(NAMESPACES, null, { apiVersion: "v1", kind: "Namespace", metadata: { name: watchedNs } });
  await pool(n, (i) => client.create(resource, watchedNs, { apiVersion: "kobun.dev/v1", kind, metadata: { name: `obj-${i}`, namespace: watchedNs }, spec: { i } }));
  const bareWatch = new AbortController();
  const watchResponse = await client.stream(resourcePath(resource, watchedNs), { watch: "true", resourceVersion: "0" }, bareWatch.signal);
  const draining = (async () => {
    try {
      for await (const _ of watchResponse.body!) { /* read and drop, as a no-op consumer */ }
    } catch {}
  })();
  cpu = process.cpuUsage();
  t0 = performance.now();
  await pool(n, (i) => floorPatch(watchedNs, i));
  const watchedWall = performance.now() - t0;
  const watchedCpu = cpuMs(process.cpuUsage(cpu));
  bareWatch.abort();
  await draining;
  Bun.gc(true);

  // The operator: a watcher feeding a reconciler with one create handler.
  const registry = new Registry();
  let handled = 0;
  let allHandled!: () => void;
  const done = new Promise<void>((resolve) => (allHandled = resolve));
  registry.on.create(resource, ({ name }) => {
    if (++handled === n) allHandled();
    return { message: `hello ${name}` };
  }, { id: "create_fn" });
  const processor = new Reconciler({ client, resource, registry, settings: resolveSettings({ fileData: { workers: { batchWindow: 0.1, limit: CONCURRENCY, idleTimeout: 5 } } }) });
  const watcher = new Watcher(client, resource, { namespace: opNs });
  const ac = new AbortController();
  const opBefore = (await ask(`patches ${resource.plural}`)).patches;
  cpu = process.cpuUsage();
  t0 = performance.now();
  const marks: Record<string, number> = {};
  const watching = (async () => {
    for await (const event of watcher.events(ac.signal)) {
      if (event.type === "listed" && marks.firstListed === undefined) marks.firstListed = performance.now() - t0;
      if (event.type === "relist-done") marks.listed = performance.now() - t0;
      processor.accept(event);
    }
  })();
  await done;
  await processor.settled();
  const opWall = performance.now() - t0;
  const opCpu = cpuMs(process.cpuUsage(cpu));
  ac.abort();
  await watching.catch(() => {});
  await processor.close(1000);
  const opPatches = (await ask(`patches ${resource.plural}`)).patches - opBefore;
  const round = (x: number) => Math.round(x * 1000) / 1000;
  return {
    resource: resource.plural,
    statusSubresource: sub,
    objects: n,
    operator: { firstListedMs: round(marks.firstListed ?? 0), listDoneMs: round(marks.listed ?? 0), wallMs: round(opWall), patchesPerObject: round(opPatches / n), cpuMsPerObject: round(opCpu / n), peakConcurrency: processor.peakConcurrency },
    floor: { wallMs: round(floorWall), patchesPerObject: round(floorPatches / n), cpuMsPerObject: round(floorCpu / n) },
    floorWithWatch: { wallMs: round(watchedWall), cpuMsPerObject: round(watchedCpu / n) },
    ratios: { wall: round(opWall / floorWall), cpu: round(opCpu / floorCpu), wallToFloorWithWatch: round(opWall / watchedWall) },
  };
}

function cpuMs(u: NodeJS.CpuUsage): number {
  return (u.user + u.system) / 1000;
}

async function pool(n: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, n) }, async () => {
    while (next < n) await fn(next++);
  }));
}
