// `kobun dev --demo` waits, for each sample, for what the operator writes to it by what its
// handlers declare: an operator of daemons, events and indexes (no change handlers) stores no
// diff base, so the demo waits for its daemons' finalizer; one of events and indexes alone writes
// nothing, and the demo says it does not wait. Neither times out (it used to, after 30 s).

import { afterAll, beforeAll, expect, test } from "bun:test";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { resolveSettings } from "../../../src/config/index.ts";
import { Registry } from "../../../src/declaring/index.ts";
import { KubeClient } from "../../../src/kube/client.ts";
import { applyManifests, demoWaits, runDemo } from "../../../src/runtime/dev.ts";
import { run } from "../../../src/runtime/operator.ts";
import { Logger, memorySink } from "../../../src/util/log.ts";

// Schemaless (x-kubernetes-preserve-unknown-fields): the demo's spec.demo change is kept.
const CRD = JSON.stringify({
  apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata: { name: "crontabs.demo.test" },
  spec: {
    group: "demo.test", scope: "Namespaced", names: { kind: "CronTab", plural: "crontabs", singular: "crontab" },
    versions: [{
      name: "v1", served: true, storage: true, subresources: { status: {} },
      schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
    }],
  },
});
const SAMPLE = "apiVersion: demo.test/v1\nkind: CronTab\nmetadata: { name: every-minute, namespace: default }\nspec: { schedule: '* * * * *' }\n";
const manifests = [{ name: "crontab.crd.yaml", text: CRD }, { name: "crontab.sample.yaml", text: SAMPLE }];
const CRONTABS = "crontabs.demo.test/v1";

let sandbox: Sandbox;
beforeAll(async () => (sandbox = await startSandbox()));
afterAll(() => sandbox.stop());

/** The demo against an operator of `registry`: what it printed, and how long it took. */
async function demoOf(registry: Registry): Promise<{ printed: string[]; ms: number }> {
  const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  const logger = new Logger(memorySink("error"));
  const stop = new AbortController();
  const printed: string[] = [];
  const log = console.log;
  console.log = (line: string) => void printed.push(line);
  let running: Promise<unknown> | undefined;
  const t0 = performance.now();
  try {
    await applyManifests(client, manifests, logger, stop.signal);
    const settings = resolveSettings({ flags: { namespaces: ["default"], standalone: true } });
    running = run({ signal: stop.signal, client, registry, logger, settings });
    expect(await runDemo(client, manifests, logger, stop.signal, registry)).toBe(true);
    return { printed, ms: performance.now() - t0 };
  } finally {
    console.log = log;
    stop.abort();
    await running;
    client.close();
  }
}

test("daemons, events and indexes: the demo waits for the daemon's finalizer, and the deletion releases it", async () => {
  const registry = new Registry();
  const daemons: string[] = [];
  registry.on.daemon(CRONTABS, async ({ name, signal }) => {
    daemons.push(name);
    await new Promise((stopped) => signal.addEventListener("abort", stopped, { once: true }));
  }, { id: "schedule" });
  registry.on.event(CRONTABS, () => {}, { id: "seen" });
  registry.on.index(CRONTABS, ({ name }) => ({ [name]: true }), { id: "byName" });
  const { printed, ms } = await demoOf(registry);
  expect(daemons).toEqual(["every-minute"]); // the daemon ran before the demo went on
  expect(printed.map((l) => l.replace(/: status=.*?(?= \(|$)/, ""))).toEqual([
    "demo: created CronTab/every-minute",
    "demo: updated CronTab/every-minute (not waited for: no change handler)",
    "demo: deleted CronTab/every-minute: gone (finalizer released)",
  ]);
  expect(ms).toBeLessThan(15_000);
}, 30_000);

test("events and indexes alone write nothing: the demo says it does not wait", async () => {
  const registry = new Registry();
  registry.on.event(CRONTABS, () => {}, { id: "seen" });
  registry.on.index(CRONTABS, ({ name }) => ({ [name]: true }), { id: "byName" });
  const { printed } = await demoOf(registry);
  expect(printed[0]).toEndWith(
    " (not waited for: its handlers (on.event, on.index) write nothing of kobun's to crontabs to wait for)",
  );
  expect(printed).toHaveLength(3);
  expect(printed[2]).toBe("demo: deleted CronTab/every-minute: gone");   // no finalizer was ever held
  const crontabs = { group: "demo.test", version: "v1", plural: "crontabs", kind: "CronTab", namespaced: true, statusSubresource: true };
  expect(demoWaits(new Registry(), crontabs)).toEqual({ what: "no handler is registered for crontabs: nothing to wait for", changes: false });
}, 30_000);

test("a reconcile with finalizer: true: the demo waits for its finalizer, and the deletion runs its cleanup", async () => {
  const registry = new Registry();
  const calls: string[] = [];
  registry.on.reconcile(CRONTABS, ({ name, deleting, patch }) => {
    calls.push(`${deleting ? "cleanup" : "reconcile"} ${name}`);
    if (!deleting) patch.status.seen = true;
  }, { finalizer: true });
  const { printed } = await demoOf(registry);
  // Before, the demo waited for nothing: the object was made, changed and deleted before the operator saw it.
  expect(printed[0]).toStartWith("demo: created CronTab/every-minute: status=");
  expect(printed[0]).not.toContain("not waited for");
  expect(printed[2]).toBe("demo: deleted CronTab/every-minute: gone (finalizer released)");
  // The demo goes on once the finalizer is there (the first call may find the deletion already): the cleanup ran.
  expect(calls.at(-1)).toBe("cleanup every-minute");
}, 30_000);
