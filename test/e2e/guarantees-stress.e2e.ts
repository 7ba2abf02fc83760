// The handlers' promises under churn, from the outside (README "What kobun promises handlers"), on
// each target: objects of a few names changed many times in quick succession, deleted while their
// handlers run (handlers that ignore their signal, as careless ones do), and made again at once
// under the same name, many at a time. Watched through the public API only:
// - no two runs of one object's handlers at once;
// - the latest state handled: each object's last spec reaches a handler;
// - fenced writes: an object made again under a name never shows a result of the one before it
//   (each result names the uid its handler ran for; the status is sampled all along). With no
//   delete handler there is no finalizer, so a deletion is immediate and the next object is made
//   while the last one's handler may still run: without the uid and resourceVersion fences of
//   reconciling/fence.ts this fails on both targets within a run or two.
//
//   cd test/e2e && KOBUN_E2E_TARGET=cluster bun test ./guarantees-stress.e2e.ts

import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { Logger, memorySink, Registry, resolveSettings, run, resource, type KubeObject } from "../../src/index.ts";
import { createNamespace, eventually, EXAMPLES } from "./harness/kube.ts";
import { ROOT } from "./harness/operator.ts";
import { targetSuite } from "./harness/suite.ts";
import { selectedTargets, type Target, type TargetName } from "./harness/target.ts";

const NAMES = 8;
const ROUNDS = 4;
const CHANGES = 5;

interface Example extends KubeObject {
  spec: { v: number };
  status?: Record<string, { uid?: string; v?: number } | undefined>;
}
const Examples = resource<Example>("kobunexamples.kobun.dev/v1");

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Handlers that record who runs when, and return the uid and spec.v they ran for. */
function recordingRegistry(): { registry: Registry; overlaps: string[]; handled: Map<string, number> } {
  const registry = new Registry();
  const running = new Set<string>();
  const overlaps: string[] = [];
  const handled = new Map<string, number>(); // uid → the last spec.v a create or update handler finished
  const body = async (uid: string, v: number) => {
    if (running.has(uid)) overlaps.push(uid);
    running.add(uid);
    await pause(Math.random() * 40); // the signal is ignored on purpose
    running.delete(uid);
    handled.set(uid, v);
    return { uid, v };
  };
  registry.on.create(Examples, ({ body: o }) => body(o.metadata.uid!, o.spec.v), { id: "made" });
  registry.on.update(Examples, ({ body: o }) => body(o.metadata.uid!, o.spec.v), { id: "changed" });
  return { registry, overlaps, handled };
}

/** Every result in an object's status that names another uid than its own. */
function foreignResults(o: Example): string[] {
  return Object.entries(o.status ?? {})
    .filter(([, result]) => result?.uid !== undefined && result.uid !== o.metadata.uid)
    .map(([id, result]) => `${o.metadata.name} (${o.metadata.uid}) has ${id} of ${result!.uid}`);
}

/** One name's life: made, changed quickly, deleted mid-handler and made again, ROUNDS times. */
async function churn(t: Target, namespace: string, name: string): Promise<void> {
  for (let round = 0; round < ROUNDS; round++) {
    const manifest = { apiVersion: "kobun.dev/v1", kind: "KobunExample", metadata: { name }, spec: { v: 0 } };
    await t.client.create(EXAMPLES, namespace, manifest);
    for (let v = 1; v <= CHANGES; v++) {
      await t.client.patch(EXAMPLES, namespace, name, { spec: { v } });
      if (Math.random() < 0.4) await pause(Math.random() * 20);
    }
    if (round === ROUNDS - 1) return;
    await t.client.delete(EXAMPLES, namespace, name); // no delete handler, no finalizer: gone at once
  }
}

describe.each(selectedTargets())("handlers' promises under churn [%s]", (targetName: TargetName) => {
  const need = targetSuite(targetName, { crds: [join(ROOT, "handlers/kobunexample.crd.yaml")], cleanup: [EXAMPLES] });

  test(`${NAMES} names, each made ${ROUNDS} times and changed ${CHANGES} times a life: no overlap, the latest handled, ` +
    "no result of an earlier object on a later one", async () => {
    const t = need();
    const namespace = await createNamespace(t.client, "e2e-churn");
    const { registry, overlaps, handled } = recordingRegistry();
    const stop = new AbortController();
    const settings = resolveSettings({ flags: { kubeconfig: t.kubeconfigPath, namespaces: [namespace], standalone: true } });
    let ready!: () => void;
    const started = new Promise<void>((resolve) => (ready = resolve));
    const logger = new Logger(memorySink("warn", "plain", { max: 200 }));
    const operator = run({ signal: stop.signal, settings, registry, logger, onReady: () => ready() });
    const foreign = new Set<string>();
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const { items } = await t.client.listAll<Example>(EXAMPLES, { namespace });
        for (const o of items) for (const line of foreignResults(o)) foreign.add(line);
        await pause(30);
      }
    })();
    try {
      await started;
      await Promise.all(Array.from({ length: NAMES }, (_, i) => churn(t, namespace, `churn-${i}`)));
      const last = await eventually("every object's last spec handled", async () => {
        const { items } = await t.client.listAll<Example>(EXAMPLES, { namespace });
        const done = items.length === NAMES && items.every((o) => handled.get(o.metadata.uid!) === CHANGES);
        return done ? items : undefined;
      }, { timeoutMs: 30_000 });
      for (const o of last) for (const line of foreignResults(o)) foreign.add(line);
      expect([...foreign]).toEqual([]);
      expect(overlaps).toEqual([]);
    } finally {
      sampling = false;
      await sampler;
      stop.abort();
      await operator;
    }
  }, 90_000);
});
