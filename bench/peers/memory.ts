// kobun's memory on the real API server (bench/real.ts --memory):
// - the slope: settled RSS with 2,000 and with 20,000 objects known, in KB per object;
// - a full relist: the binary restarted on the 20,000 handled objects (nothing pending), its
//   peak against its steady state once the list is through;
// - idle: RSS with one object known against a compiled hello-world that stays up.
// Each RSS reading also gives its anonymous part (anonMiB: the JS heap and malloc's); the rest is
// file pages, mostly the executable's own code that the process has run (measure.ts's memoryKiB).

import { join } from "node:path";
import type { KubeClient } from "../../src/kube/client.ts";
import { EXAMPLES, rawWatch } from "../../test/e2e/harness/kube.ts";
import { lineReader, round } from "../common.ts";
import type { Peer, Target } from "./index.ts";
import { measureRun, memoryKiB, namespaceWithObjects, settledRss } from "./measure.ts";

const SMALL = 2000;
const LARGE = 20000;
/** The most a process is left idle for its RSS to stop falling before it is read (measure.ts's settledRss). */
const SETTLE_MS = 30_000;

export async function measureMemory(kobun: Peer, target: Target, client: KubeClient, work: string): Promise<Record<string, unknown>> {
  const settled: Record<number, number> = {};
  const anon: Record<number, number> = {};
  const peaks: Record<number, number> = {};
  for (const count of [SMALL, LARGE]) {
    const namespace = `memory-${count}`;
    const fromVersion = await namespaceWithObjects(client, namespace, count);
    const run = await measureRun(kobun, target, client, namespace, count, fromVersion, { settle: SETTLE_MS });
    settled[count] = run.settledRssMiB!;
    anon[count] = run.settledAnonMiB!;
    peaks[count] = run.peakRssMiB;
  }
  const relist = await relistOf(kobun, target, client, `memory-${LARGE}`);
  const idle = await idleOf(kobun, target, client);
  const hello = await helloWorldRssMiB(work);
  return {
    settledRssMiB: { [SMALL]: round(settled[SMALL]!, 1), [LARGE]: round(settled[LARGE]!, 1) },
    settledAnonMiB: { [SMALL]: round(anon[SMALL]!, 1), [LARGE]: round(anon[LARGE]!, 1) },
    peakRssMiB: { [SMALL]: round(peaks[SMALL]!, 1), [LARGE]: round(peaks[LARGE]!, 1) },
    kbPerObject: round(((settled[LARGE]! - settled[SMALL]!) * 1024) / (LARGE - SMALL), 2),
    relistOf20000: { peakRssMiB: round(relist.peak, 1), steadyRssMiB: round(relist.steady.rssMiB, 1), steadyAnonMiB: round(relist.steady.anonMiB, 1), peakOverSteady: round(relist.peak / relist.steady.rssMiB) },
    idleRssMiB: round(idle.rssMiB, 1), idleAnonMiB: round(idle.anonMiB, 1), helloWorldRssMiB: round(hello.rssMiB, 1), helloWorldAnonMiB: round(hello.anonMiB, 1),
    idleOverHelloWorldMiB: round(idle.rssMiB - hello.rssMiB, 1),
    targets: { kbPerObject: 2, relistPeakOverSteady: 1.3, idleOverHelloWorldMiB: 15 },
  };
}

/**
 * The binary started on `namespace`, whose objects are all handled. The last object by name
 * (the end of the list) gets a spec change first; its update handler's result marks the list
 * as through, since the stream delivers that object no earlier than the list's end.
 */
async function relistOf(kobun: Peer, target: Target, client: KubeClient, namespace: string): Promise<{ peak: number; steady: Reading }> {
  const names = (await client.listAll(EXAMPLES, { namespace })).items.map((o) => o.metadata.name!).sort();
  const last = names.at(-1)!;
  const changed = await client.patch(EXAMPLES, namespace, last, { spec: { size: 2 } }, { type: "merge" });
  const updated = rawWatch(client, `/apis/kobun.dev/v1/namespaces/${namespace}/kobunexamples`,
    { resourceVersion: changed.metadata.resourceVersion!, fieldSelector: `metadata.name=${last}` },
    { timeoutMs: 300_000, until: (event) => event.object?.status?.update_fn !== undefined });
  const child = Bun.spawn(kobun.command(target, namespace), { env: kobun.env(target), stdin: "ignore", stdout: "ignore", stderr: "ignore" });
  try {
    if ((await updated).ended !== "until") throw new Error("bench: the relist's update was not handled");
    const steady = await settledRss(child.pid, { maxMs: SETTLE_MS });
    return { peak: memoryKiB(child.pid, "VmHWM") / 1024, steady };
  } finally {
    child.kill("SIGTERM");
    await child.exited;
  }
}

/** An RSS reading and its anonymous part, in MiB. */
interface Reading { rssMiB: number; anonMiB: number }

/** RSS of the binary watching a namespace with one object, once that object is handled. */
async function idleOf(kobun: Peer, target: Target, client: KubeClient): Promise<Reading> {
  const namespace = "memory-idle";
  const fromVersion = await namespaceWithObjects(client, namespace, 1);
  const run = await measureRun(kobun, target, client, namespace, 1, fromVersion, { settle: SETTLE_MS });
  return { rssMiB: run.settledRssMiB!, anonMiB: run.settledAnonMiB! };
}

/** A compiled hello-world that prints and stays up, built like kobun; its RSS once it printed. */
async function helloWorldRssMiB(work: string): Promise<Reading> {
  const source = join(work, "hello.ts");
  await Bun.write(source, 'console.log("hello");\nsetInterval(() => {}, 1 << 30);\n');
  const outfile = join(work, "hello");
  const built = await Bun.build({ entrypoints: [source], target: "bun", bytecode: true, format: "esm", minify: true, compile: { outfile } });
  if (!built.success) throw new Error("bench: building hello-world failed");
  const child = Bun.spawn([outfile], { stdin: "ignore", stdout: "pipe", stderr: "ignore" });
  try {
    await lineReader(child.stdout).next();
    return await settledRss(child.pid, { maxMs: SETTLE_MS });
  } finally {
    child.kill("SIGKILL");
    await child.exited;
  }
}
