// Scale by simulation, past what a real API server does on this machine: kobun's binary (the
// example's handlers, as in bench/real.ts) against the sandbox holding 1k, 10k and 100k
// objects. Per size: CPU per object of the initial burst, RSS once it stopped falling (bounded), then a spec change
// on EVENTS objects: CPU and wall per update event, and RSS after. A line through the three
// sizes should be flat per event (no super-linear step) and linear in RSS. The wall per event
// includes the sandbox's own work, in this process, and the 200 ms scans that notice the end.
//
//   bun bench/scale.ts [--sizes 1000,10000,100000] [--events 1000]
//
// Writes its figures to bench/results.json under "scale".

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { installExampleCRD, report, round, saveResults } from "./common.ts";
import { kobunBenchBinary } from "./peers/index.ts";
import { cpuMs, memoryKiB, settledRss } from "./peers/measure.ts";

const { values } = parseArgs({ options: { sizes: { type: "string", default: "1000,10000,100000" }, events: { type: "string", default: "1000" } } });
const sizes = values.sizes.split(",").map(Number);
const EVENTS = Number(values.events);
if (sizes.some((n) => !Number.isInteger(n) || n < 1) || !Number.isInteger(EVENTS) || EVENTS < 1) throw new Error("--sizes: positive integers, comma-separated; --events: a positive integer");
/** The most the operator is left idle after the burst for its RSS to stop falling (a collection can come late). */
const SETTLE_MS = 60_000;
const base = (s: Sandbox) => `${s.url}/apis/kobun.dev/v1/namespaces/default/kobunexamples`;

async function inFlight(count: number, lanes: number, one: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: lanes }, async () => {
    while (next < count) await one(next++);
  }));
}

async function send(url: string, method: string, body: unknown, type = "application/json"): Promise<void> {
  const response = await fetch(url, { method, headers: { "content-type": type }, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`bench: ${method} ${url}: ${response.status}`);
  await response.arrayBuffer();
}

/**
 * Resolves when every object named satisfies `done` (scans every 200 ms: the figures are the
 * operator's). The store hands out copies, so a scan of all of them at 100k took seconds of the
 * event loop the sandbox serves the operator from, every second. Objects are handled about in
 * LIST order (by name): a scan reads the ones still waiting from the front and stops at the
 * first not done; only when that front did not move once the work began (a straggler, a retry)
 * does it read all that still wait.
 */
async function until(sandbox: Sandbox, names: string[], done: (o: any) => boolean, what: string): Promise<number> {
  const started = performance.now();
  const isDone = (name: string) => done(sandbox.store.get("kobun.dev", "kobunexamples", "default", name));
  let waiting = [...names].sort();
  let front = 0;
  for (;;) {
    const from = front;
    while (front < waiting.length && isDone(waiting[front]!)) front++;
    if (front === from && (front > 0 || waiting.length <= 1000)) {
      waiting = waiting.slice(front).filter((name) => !isDone(name));
      front = 0;
    }
    if (front >= waiting.length) return performance.now() - started;
    if (performance.now() - started > 1_800_000) throw new Error(`bench: ${what} not done within 30 minutes`);
    await Bun.sleep(200);
  }
}

async function one(size: number, binary: string, home: string): Promise<Record<string, number>> {
  const sandbox = await startSandbox();
  try {
    await installExampleCRD(sandbox);
    const seeding = performance.now();
    // 8 in flight: the sandbox serves them in this process, and more lanes only queue (10k: 2.1 s vs 3.6 s with 50)
    await inFlight(size, 8, (i) => send(base(sandbox), "POST", { apiVersion: "kobun.dev/v1", kind: "KobunExample", metadata: { name: `ex-${i}` }, spec: { size: 1 } }));
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home };
    const seedMs = performance.now() - seeding;
    console.error(`bench: ${size} objects seeded in ${Math.round(seedMs)} ms`);
    const child = Bun.spawn([binary, "run", "--kubeconfig", sandbox.kubeconfigPath, "-n", "default", "--standalone", "-q"], { env, stdin: "ignore", stdout: "ignore", stderr: "ignore" });
    try {
      const burstMs = await until(sandbox, Array.from({ length: size }, (_, i) => `ex-${i}`), (o) => o.status?.create_fn, "the burst");
      const burstCpu = cpuMs(child.pid);
      console.error(`bench: burst of ${size} handled in ${Math.round(burstMs)} ms`);
      const settled = await settledRss(child.pid, { maxMs: SETTLE_MS });
      const events = Math.min(EVENTS, size); // each on a different object
      const changedNames = Array.from({ length: events }, (_, i) => `ex-${Math.floor((i * size) / events)}`);
      const before = cpuMs(child.pid);
      const changed = performance.now();
      await inFlight(events, 50, (i) => send(`${base(sandbox)}/${changedNames[i]}`, "PATCH", { spec: { size: 2 } }, "application/merge-patch+json"));
      await until(sandbox, changedNames, (o) => o.status?.update_fn, "the updates");
      const eventsMs = performance.now() - changed;
      console.error(`bench: ${events} updates handled in ${Math.round(eventsMs)} ms`);
      const eventsCpu = cpuMs(child.pid) - before;
      return {
        objects: size, seedMs: Math.round(seedMs), burstCpuMsPerObject: round(burstCpu / size, 3), burstMs: Math.round(burstMs),
        settledRssMiB: round(settled.rssMiB, 1), settledAfterMs: Math.round(settled.afterMs), peakRssMiB: round(memoryKiB(child.pid, "VmHWM") / 1024, 1),
        events, cpuMsPerEvent: round(eventsCpu / events, 3), wallMsPerEvent: round(eventsMs / events, 3),
        rssAfterEventsMiB: round(memoryKiB(child.pid, "VmRSS") / 1024, 1), eventsMs: Math.round(eventsMs),
      };
    } finally {
      child.kill("SIGTERM");
      await child.exited;
    }
  } finally {
    await sandbox.stop();
  }
}

const work = mkdtempSync(join(tmpdir(), "kobun-bench-scale-"));
try {
  const binary = kobunBenchBinary();
  const rows = [];
  for (const size of sizes) {
    rows.push(await one(size, binary, work));
    report("scale-size", rows.at(-1)!);
  }
  const first = rows[0]!;
  const last = rows.at(-1)!;
  const figures = {
    events: EVENTS, rows,
    cpuPerEventLastOverFirst: round(last.cpuMsPerEvent! / first.cpuMsPerEvent!),
    kbPerObject: rows.length > 1 ? round(((last.settledRssMiB! - first.settledRssMiB!) * 1024) / (last.objects! - first.objects!), 2) : undefined,
  };
  report("scale", figures);
  saveResults("scale", figures);
} finally {
  rmSync(work, { recursive: true, force: true });
}
