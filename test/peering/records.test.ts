// Writing records: a dead peer's record is removed only if it is still the one judged dead
// (a refreshed peer is not erased by a stale view), and a cluster whose peering CRD has a
// status subresource still gets our records (via /status) instead of silently losing them.

import { afterEach, beforeEach, expect, test } from "bun:test";
import { crdResource, formatTime, Peering, peeringCRDs, peeringResource } from "../../src/peering/index.ts";
import { peeringTarget, removeDeadRecord } from "../../src/peering/records.ts";
import { Toggle } from "../../src/util/toggle.ts";
import { env, eventually, record, testLogger, until, writeRaw, type Env } from "./helpers.ts";

let e: Env;
afterEach(async () => {
  await e.stop();
});

test("a dead peer's record is removed only while it is unchanged", async () => {
  e = await env();
  const resource = peeringResource("kobun.dev", true);
  await e.client.create(resource, "default", { apiVersion: "kobun.dev/v1", kind: "KobunPeering", metadata: { name: "default", namespace: "default" } });
  const stale = formatTime(Date.now() - 120_000);
  await writeRaw(e.client, resource, "default", "default", "peer/with~odd", { priority: 1, lifetime: 60, lastseen: stale });
  const target = peeringTarget("kobun.dev", "default", "default");
  // the peer refreshed its record after we judged it dead: nothing is removed
  await writeRaw(e.client, resource, "default", "default", "peer/with~odd", record(1, 60));
  expect(await removeDeadRecord(e.client, target, "peer/with~odd", stale)).toBe(false);
  expect(e.sandbox.store.get("kobun.dev", "kobunpeerings", "default", "default")?.status?.["peer/with~odd"]).toBeDefined();
  // unchanged since judged dead: removed
  const current = e.sandbox.store.get("kobun.dev", "kobunpeerings", "default", "default")?.status?.["peer/with~odd"]?.lastseen;
  expect(await removeDeadRecord(e.client, target, "peer/with~odd", current)).toBe(true);
  expect(e.sandbox.store.get("kobun.dev", "kobunpeerings", "default", "default")?.status?.["peer/with~odd"]).toBeUndefined();
});

test("with a status subresource on the peering CRD (not Kopf's layout), records still land, via /status", async () => {
  e = await env({ crds: [] });
  for (const crd of peeringCRDs("kobun.dev")) {
    crd.spec!.versions[0].subresources = { status: {} };
    await e.client.create(crdResource, null, crd);
  }
  const resource = peeringResource("kobun.dev", true);
  await e.client.create(resource, "default", { apiVersion: "kobun.dev/v1", kind: "KobunPeering", metadata: { name: "default", namespace: "default" } });
  const toggle = new Toggle();
  const controller = new AbortController();
  const done = new Peering({
    client: e.client, toggle, name: "default", namespace: "default", priority: 0, lifetime: 2, group: "kobun.dev", logger: testLogger().logger, mandatory: true, id: "op",
  }).run(controller.signal);
  await until(toggle, false);
  await eventually(() => e.sandbox.store.get("kobun.dev", "kobunpeerings", "default", "default")?.status?.op !== undefined, 3000, "our record via /status");
  expect(e.sandbox.stats.log.some((r) => r.verb === "patch" && r.path.endsWith("/status"))).toBe(true);
  await e.client.patch(resource, "default", "default", { status: { boss: record(5, 60) } }, { type: "merge", subresource: "status" });
  await until(toggle, true);
  controller.abort();
  await done;
  expect(e.sandbox.store.get("kobun.dev", "kobunpeerings", "default", "default")?.status?.op).toBeUndefined();
});
