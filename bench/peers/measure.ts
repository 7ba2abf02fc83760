// One measured run of one peer on the real API server: N objects exist before it starts; the
// bench watches them and notes when every one has `status.create_fn` (and the finalizer). CPU
// and memory are the operator process's own, from /proc while it runs (not rusage: a spawned
// child's ru_maxrss starts from its parent's); SIGTERM → exit is timed right after the burst, its TLS connections open.

import { readFileSync } from "node:fs";
import type { KubeClient } from "../../src/kube/client.ts";
import type { KubeObject, Resource } from "../../src/kube/types.ts";
import { EXAMPLES, NAMESPACES, rawWatch } from "../../test/e2e/harness/kube.ts";
import type { Peer, Target } from "./index.ts";

export interface RunFigures {
  objects: number;
  cpuMsPerObject: number;
  peakRssMiB: number;
  /** RSS once the burst is over and RSS stopped falling, waited for at most `settle` ms (the steady state with N objects known). */
  settledRssMiB?: number;
  /** Of settledRssMiB, the anonymous part (heaps: JS and malloc); the rest is file pages, mostly the executable's own code. */
  settledAnonMiB?: number;
  wallMs: number;
  /** SIGTERM → exit; EXIT_BOUND_MS when the peer had not exited by then (and was killed). */
  sigtermToExitMs: number;
  /** The peer had not exited EXIT_BOUND_MS after SIGTERM and was killed (Kopf, at times). */
  killedAfterSigterm?: boolean;
}

/** How long a peer gets to exit after SIGTERM: Kopf at times never exits, and the bench must end. */
export const EXIT_BOUND_MS = 30_000;

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** user + system CPU of a running process, in ms. */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/**
 * A line of /proc/<pid>/status in KiB: VmRSS (now), VmHWM (peak), or of VmRSS the anonymous
 * pages (RssAnon: the JS heap and malloc's) and the file pages (RssFile: the executable's code
 * and data the process touched; a compiled Bun program maps its 100 MB runtime, and each
 * subsystem it runs, the JIT tiers among them, pages in more of it).
 */
export function memoryKiB(pid: number, field: "VmRSS" | "VmHWM" | "RssAnon" | "RssFile"): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
}

/**
 * RSS (MiB) of a process once it is idle and its RSS stopped falling: sampled every 500 ms until,
 * for `quietMs`, it used under 5 % of a core and made no new low (by more than 1 %); at least
 * `minMs` after the call, at most `maxMs` (then the last reading, with `bounded` true). After a
 * burst, the echoes of its writes can keep the operator busy, and a collection can come seconds
 * later (at 100k objects, hundreds of MB): a reading at a fixed delay caught RSS before either.
 */
export async function settledRss(pid: number, { minMs = 2000, quietMs = 3000, maxMs = 30_000 } = {}): Promise<{ rssMiB: number; anonMiB: number; afterMs: number; bounded: boolean }> {
  const started = performance.now();
  let low = Infinity;
  let quietSince = started;
  let cpu = cpuMs(pid);
  for (;;) {
    await Bun.sleep(500); // a reading of an idle process, not a synchronisation
    const rss = memoryKiB(pid, "VmRSS") / 1024;
    const now = performance.now();
    const used = cpuMs(pid) - cpu;
    cpu += used;
    if (rss < low * 0.99 || used > 25) quietSince = now;
    low = Math.min(low, rss);
    const elapsed = now - started;
    const bounded = elapsed >= maxMs;
    if ((elapsed >= minMs && now - quietSince >= quietMs) || bounded) return { rssMiB: rss, anonMiB: memoryKiB(pid, "RssAnon") / 1024, afterMs: elapsed, bounded };
  }
}

/**
 * A namespace holding `count` fresh objects of `resource` (KobunExamples by default), 50
 * creations in flight, `make(i)` the i-th; the list's resourceVersion once they are made.
 */
export async function namespaceWithObjects(
  client: KubeClient, namespace: string, count: number,
  resource: Resource = EXAMPLES, make: (i: number) => KubeObject = (i) => ({ apiVersion: "kobun.dev/v1", kind: "KobunExample", metadata: { name: `ex-${i}` }, spec: { size: 1 } }),
): Promise<string> {
  await client.create(NAMESPACES, null, { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
  let made = 0;
  const lane = async () => {
    while (made < count) await client.create(resource, namespace, make(made++));
  };
  await Promise.all(Array.from({ length: 50 }, lane));
  const list = await client.list(resource, { namespace, limit: 1 });
  return list.metadata.resourceVersion!;
}

/**
 * Resolves when every object of the namespace has been handled, as seen on a watch from
 * `fromVersion`. The API server closes a watch whose reader falls behind (this process, on a
 * busy machine): it is then resumed from the last version seen.
 */
async function allHandled(client: KubeClient, namespace: string, count: number, fromVersion: string, timeoutMs: number): Promise<void> {
  const done = new Set<string>();
  const handled = (o: KubeObject) => o.status?.create_fn !== undefined && (o.metadata.finalizers?.length ?? 0) > 0;
  const deadline = performance.now() + timeoutMs;
  let version = fromVersion;
  while (performance.now() < deadline) {
    const { ended, events } = await rawWatch(client, `/apis/kobun.dev/v1/namespaces/${namespace}/kobunexamples`, { resourceVersion: version, allowWatchBookmarks: "true" }, {
      timeoutMs: deadline - performance.now(),
      until: (event) => {
        if (event.type === "ERROR") throw new Error(`bench: watch ERROR in ${namespace}: ${event.object?.message}`);
        version = event.object?.metadata?.resourceVersion ?? version;
        if (event.type !== "BOOKMARK" && handled(event.object)) done.add(event.object.metadata.name);
        return done.size >= count;
      },
    });
    if (ended === "until") return;
    if (ended === "timeout") break;
    events.length = 0;
  }
  throw new Error(`bench: ${done.size} of ${count} objects handled in ${namespace} within ${timeoutMs} ms`);
}

/**
 * Runs `peer` on `namespace` until all `count` objects are handled, then stops it. `settle`
 * (ms), when given, bounds how long it is left idle after the burst for its RSS to stop falling
 * (settledRss), before SIGTERM is sent; by default SIGTERM follows the burst at once.
 */
export async function measureRun(
  peer: Peer, target: Target, client: KubeClient, namespace: string, count: number, fromVersion: string,
  { timeoutMs = 600_000, settle = 0 }: { timeoutMs?: number; settle?: number } = {},
): Promise<RunFigures> {
  const watching = allHandled(client, namespace, count, fromVersion, timeoutMs);
  const started = performance.now();
  const child = Bun.spawn(peer.command(target, namespace), { env: peer.env(target), stdin: "ignore", stdout: "ignore", stderr: "pipe" });
  const stderr = new Response(child.stderr).text();
  const failed = child.exited.then(async (code) => {
    throw new Error(`bench: ${peer.name} exited (${code}) before the burst was handled: ${(await stderr).slice(-2000)}`);
  });
  failed.catch(() => {}); // it rejects on every exit; only the race below cares, before SIGTERM
  try {
    await Promise.race([watching, failed]);
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
  const wallMs = performance.now() - started;
  const cpu = cpuMs(child.pid);
  // A reading of memory once the burst is over and RSS stopped falling (at most `settle` ms).
  const settled = settle > 0 ? await settledRss(child.pid, { maxMs: settle }) : undefined;
  const peakRssMiB = memoryKiB(child.pid, "VmHWM") / 1024;
  const stopping = performance.now();
  child.kill("SIGTERM");
  const exited = await exitedWithin(child.exited, EXIT_BOUND_MS);
  const sigtermToExitMs = exited ? performance.now() - stopping : EXIT_BOUND_MS;
  if (!exited) {
    console.error(`bench: ${peer.name} had not exited ${EXIT_BOUND_MS} ms after SIGTERM; killed`);
    child.kill("SIGKILL");
    await child.exited;
  }
  return {
    objects: count, cpuMsPerObject: cpu / count, peakRssMiB, settledRssMiB: settled?.rssMiB, settledAnonMiB: settled?.anonMiB, wallMs, sigtermToExitMs,
    ...(exited ? {} : { killedAfterSigterm: true }),
  };
}

/** Whether `exit` settled within `ms`. */
async function exitedWithin(exit: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(resolve, ms, false)));
  try {
    return await Promise.race([exit.then(() => true as const), late]);
  } finally {
    clearTimeout(timer);
  }
}
