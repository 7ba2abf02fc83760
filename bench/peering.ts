// Bench for src/peering/ (seed 000): how fast a freeze closes the resource streams, and how
// fast a resume starts listing again. Run: `bun bench/peering.ts` (prints one JSON object).
//
// Setup: a sandbox, a Peering (priority 0, namespaced), and N=20 resource loops exactly as
// the runtime runs them (waitRunning → Watcher.events(signal linked to toggle.runningSignal)),
// each over configmaps in its own namespace. Per cycle:
//   - freeze: a priority-10 record is PATCHed into the peering object (t0 = just before the
//     PATCH is sent) → the peering watch event → decide → Toggle.freeze → all N loops' streams
//     ended (client side), and the sandbox's open-watch count back to 1 (server side, polled
//     every ms, so ±1 ms);
//   - resume: the record is removed (t0 = just before that PATCH) → Toggle.unfreeze → the
//     first LIST (or streaming-list WATCH) of configmaps arriving at the sandbox.
// Baseline beside it: the same N streams opened with bare `client.stream` and closed by one
// AbortController (abort → all reads rejected), and a bare LIST fetch (call → request seen):
// the floor any freeze/resume path sits on.

import { KubeClient } from "../src/kube/client.ts";
import { resourcePath, type Resource } from "../src/kube/types.ts";
import { crdResource, Peering, peeringCRDs, peeringResource, formatTime } from "../src/peering/index.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { linkedSignal } from "../src/util/abort.ts";
import { silentLogger } from "../src/util/log.ts";
import { Toggle } from "../src/util/toggle.ts";
import { Watcher } from "../src/watching/watcher.ts";

const N = Number(process.env.N ?? 20);
const RUNS = Number(process.env.RUNS ?? 15);
const configmaps: Resource = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false };
const namespaces = Array.from({ length: N }, (_, i) => `bench-${i}`);
const peering = peeringResource("kobun.dev", true);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const max = (xs: number[]) => Math.max(...xs);
const round = (x: number, digits = 2) => Number(x.toFixed(digits));

async function untilPolled(pred: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!pred()) {
    if (performance.now() > deadline) throw new Error(`bench: timed out waiting for ${what}`);
    await Bun.sleep(1);
  }
}

function nextTransition(toggle: Toggle, frozen: boolean): Promise<number> {
  return new Promise((resolve) => {
    const off = toggle.onChange((now) => {
      if (now !== frozen) return;
      off();
      resolve(performance.now());
    });
  });
}

/** N loops as the runtime runs them; `ended` resolves when all N current streams have ended. */
function startLoops(client: KubeClient, toggle: Toggle, signal: AbortSignal) {
  let endedInCycle = 0;
  let listedInCycle = 0;
  let onAllEnded: ((t: number) => void) | undefined;
  let onAllListed: (() => void) | undefined;
  const loops = namespaces.map(async (namespace) => {
    const watcher = new Watcher(client, configmaps, { namespace });
    while (await toggle.waitRunning(signal)) {
      const link = linkedSignal(signal, toggle.runningSignal);
      try {
        for await (const event of watcher.events(link.signal)) {
          if (event.type === "relist-done" && ++listedInCycle === N) onAllListed?.();
        }
      } finally {
        link.dispose();
      }
      if (++endedInCycle === N) onAllEnded?.(performance.now());
    }
  });
  return {
    done: Promise.all(loops),
    allEnded(): Promise<number> {
      endedInCycle = 0;
      return new Promise((resolve) => (onAllEnded = resolve));
    },
    allListed(): Promise<void> {
      listedInCycle = 0;
      return new Promise((resolve) => (onAllListed = resolve));
    },
  };
}

async function measurePeering(sandbox: Sandbox, client: KubeClient) {
  const toggle = new Toggle();
  const controller = new AbortController();
  const instance = new Peering({
    client, toggle, name: "default", namespace: "default", priority: 0, lifetime: 60, group: "kobun.dev", logger: silentLogger, mandatory: true, id: "bench",
  });
  const running = instance.run(controller.signal);
  const loops = startLoops(client, toggle, controller.signal);
  let listed = loops.allListed();
  await listed;
  await untilPolled(() => sandbox.stats.openWatches() === N + 1, 5000, "all watches open");

  const freeze = { toToggle: [] as number[], toStreamsEnded: [] as number[], toServerClosed: [] as number[] };
  const resume = { toToggle: [] as number[], toggleToFirstList: [] as number[], toFirstList: [] as number[], toAllRelisted: [] as number[] };
  let firstVerb = "";
  for (let run = 0; run < RUNS; run++) {
    // freeze
    const frozen = nextTransition(toggle, true);
    const ended = loops.allEnded();
    const t0 = performance.now();
    await client.patch(peering, "default", "default", { status: { boss: { priority: 10, lifetime: 60, lastseen: formatTime(Date.now()) } } }, { type: "merge" });
    const tFrozen = await frozen;
    const tEnded = await ended;
    await untilPolled(() => sandbox.stats.openWatches() === 1, 5000, "watches closed at the sandbox");
    const tServer = performance.now();
    freeze.toToggle.push(tFrozen - t0);
    freeze.toStreamsEnded.push(tEnded - t0);
    freeze.toServerClosed.push(tServer - t0);

    // resume
    const resumed = nextTransition(toggle, false);
    let tFirst = 0;
    const first = sandbox.waitFor((r) => {
      const hit = r.plural === "configmaps" && (r.verb === "list" || r.verb === "watch");
      if (hit && !firstVerb) firstVerb = r.verb;
      return hit;
    }, 5000).then(() => (tFirst = performance.now()));
    listed = loops.allListed();
    const t1 = performance.now();
    await client.patch(peering, "default", "default", { status: { boss: null } }, { type: "merge" });
    const tResumed = await resumed;
    await first;
    await listed;
    const tListed = performance.now();
    resume.toToggle.push(tResumed - t1);
    resume.toggleToFirstList.push(tFirst - tResumed);
    resume.toFirstList.push(tFirst - t1);
    resume.toAllRelisted.push(tListed - t1);
  }
  controller.abort();
  await Promise.all([running, loops.done]);
  return { freeze, resume, firstVerb };
}

async function measureBaseline(sandbox: Sandbox, client: KubeClient) {
  const close: number[] = [];
  const list: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const controller = new AbortController();
    const streams = await Promise.all(
      namespaces.map((ns) => client.stream(resourcePath(configmaps, ns), { watch: "true", allowWatchBookmarks: "true" }, controller.signal)),
    );
    const reads = streams.map(async (response) => {
      const reader = response.body!.getReader();
      try {
        while (!(await reader.read()).done);
      } catch {
        // aborted
      }
    });
    await untilPolled(() => sandbox.stats.openWatches() === N, 5000, "baseline watches open");
    const t0 = performance.now();
    controller.abort();
    await Promise.all(reads);
    close.push(performance.now() - t0);
    await untilPolled(() => sandbox.stats.openWatches() === 0, 5000, "baseline watches closed");

    let tSeen = 0;
    const seen = sandbox.waitFor((r) => r.plural === "configmaps" && r.verb === "list", 5000).then(() => (tSeen = performance.now()));
    const t1 = performance.now();
    await client.list(configmaps, { namespace: namespaces[0]!, limit: 500 });
    await seen;
    list.push(tSeen - t1);
  }
  return { close, list };
}

const sandbox = await startSandbox();
const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
try {
  for (const crd of peeringCRDs("kobun.dev")) await client.create(crdResource, null, crd);
  const nsResource: Resource = { group: "", version: "v1", plural: "namespaces", kind: "Namespace", namespaced: false, statusSubresource: true };
  for (const name of namespaces) await client.create(nsResource, null, { apiVersion: "v1", kind: "Namespace", metadata: { name } });

  const baseline = await measureBaseline(sandbox, client);
  const { freeze, resume, firstVerb } = await measurePeering(sandbox, client);
  const m = (xs: number[]) => ({ median: round(median(xs)), max: round(max(xs)) });
  console.log(
    JSON.stringify({
      bench: "peering",
      watchers: N,
      runs: RUNS,
      unit: "ms",
      freeze: {
        recordWrittenToToggleFrozen: m(freeze.toToggle),
        recordWrittenToAllStreamsEnded: m(freeze.toStreamsEnded),
        recordWrittenToSandboxWatchesClosed: m(freeze.toServerClosed),
        baselineAbortToAllStreamsEnded: m(baseline.close),
        ratioStreamsEndedToBaseline: round(median(freeze.toStreamsEnded) / median(baseline.close)),
      },
      resume: {
        recordRemovedToToggleRunning: m(resume.toToggle),
        toggleRunningToFirstList: m(resume.toggleToFirstList),
        recordRemovedToFirstList: m(resume.toFirstList),
        recordRemovedToAllRelisted: m(resume.toAllRelisted),
        firstListVerb: firstVerb,
        baselineCallToListSeen: m(baseline.list),
        ratioFirstListToBaseline: round(median(resume.toggleToFirstList) / median(baseline.list)),
      },
      targets: { freezeToStreamsClosed: "< 5 ms", resumeToFirstList: "< 5 ms" },
    }),
  );
} finally {
  client.close();
  await sandbox.stop();
}
