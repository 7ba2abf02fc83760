// Review findings in peering: a deleted peering object must not unfreeze an operator while a
// higher peer's record is still alive; a freeze taken while the peering object could not be read
// is released once peering is settled; a very long (manual) freeze does not spin a timer.

import { afterEach, beforeEach, expect, test } from "bun:test";
import { KubeClient } from "../../src/kube/client.ts";
import { crdResource, peeringResource, type PeeringOptions } from "../../src/peering/index.ts";
import { env, record, until, writeRaw, startPeering, type Env } from "./helpers.ts";

const resource = peeringResource("kobun.dev", true);
let e: Env;
const running: { controller: AbortController; done: Promise<void> }[] = [];

beforeEach(async () => {
  e = await env();
});
afterEach(async () => {
  for (const r of running.splice(0)) {
    r.controller.abort();
    await r.done;
  }
  await e.stop();
});

const start = (options: Partial<PeeringOptions> & { id: string }) => startPeering(e, running, { lifetime: 60 }, options);

test("deleting the peering object does not unfreeze an operator while a higher peer's record is alive", async () => {
  const low = start({ id: "low" });
  await until(low.toggle, false);
  await writeRaw(e.client, resource, "default", "default", "boss", record(10, 60));
  await until(low.toggle, true);
  await e.client.delete(resource, "default", "default");
  // The boss is alive for another minute; only its own keep-alive (or its expiry) may tell otherwise.
  const unfroze = await until(low.toggle, false, 500).then(() => true, () => false);
  expect(unfroze).toBe(false);
});

test("a freeze taken because the peering object could not be read is released when peering turns out not to be in use", async () => {
  const client = await KubeClient.connect({ kubeconfig: e.sandbox.kubeconfigPath, retries: 0 });
  try {
    const op = start({ id: "op", client, lifetime: 1, recheck: { initialMs: 10, maxMs: 20 } });
    await until(op.toggle, false);
    e.sandbox.faults.failNext(1, 500, { verb: "get", plural: "kobunpeerings" });
    await client.delete(crdResource, null, "kobunpeerings.kobun.dev");
    await op.done; // not mandatory: peering is off now
    expect(op.toggle.reasons()).toEqual({});
    expect(op.toggle.frozen).toBe(false);
  } finally {
    client.close();
  }
});

test("a manual freeze of 30 days keeps the operator frozen without re-evaluating in a tight timer loop", async () => {
  const op = start({ id: "op", lifetime: 2 });
  await until(op.toggle, false);
  await writeRaw(e.client, resource, "default", "default", "maintenance", record(100, 30 * 24 * 3600));
  await until(op.toggle, true);
  let evaluations = 0;
  const target = op.peering as unknown as { evaluate(): void };
  const original = target.evaluate.bind(op.peering);
  target.evaluate = () => {
    evaluations++;
    original();
  };
  await Bun.sleep(200); // a spinning timer can only be seen over time
  expect(op.toggle.frozen).toBe(true);
  expect(evaluations).toBeLessThanOrEqual(2);
});

test("an operator that re-creates a deleted peering object with its own keep-alive stays frozen while a higher peer is alive", async () => {
  const low = start({ id: "low", lifetime: 1 }); // keep-alives every ~0.7 s
  await until(low.toggle, false);
  await writeRaw(e.client, resource, "default", "default", "boss", record(10, 60));
  await until(low.toggle, true);
  await e.client.delete(resource, "default", "default");
  const recreated = e.sandbox.waitFor((r) => r.verb === "create" && r.path.includes("kobunpeerings"), 3000);
  await recreated;
  expect(e.sandbox.store.get("kobun.dev", "kobunpeerings", "default", "default")?.status?.boss).toBeUndefined();
  const unfroze = await until(low.toggle, false, 300).then(() => true, () => false);
  expect(unfroze).toBe(false);
});
