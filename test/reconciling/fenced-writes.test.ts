// Every write kobun makes for an object is fenced by its uid (issue 30, defect 7): a plan made
// for an object that was deleted and made again under its name lands nothing on the new one,
// and costs no request more than an unfenced one. Against the sandbox over loopback.

import { afterEach, expect, test } from "bun:test";
import type { CyclePlan } from "../../src/handling/cycle.ts";
import { STATUS_KEY } from "../../src/declaring/keys.ts";
import { KubeClient } from "../../src/kube/client.ts";
import type { KubeObject } from "../../src/kube/types.ts";
import { applyPlan, type PatchTarget } from "../../src/reconciling/patching.ts";
import { silentLogger } from "../../src/util/log.ts";
import { startHarness, type Harness } from "../handling/harness.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

function planOf(fields: Partial<CyclePlan>): CyclePlan {
  return {
    cause: "create", user: undefined, results: {}, bookkeeping: { progress: new Map() }, finalizer: undefined,
    finalizerFirst: false, delay: undefined, runs: [], essence: undefined, ...fields,
  };
}

/** The object as the old plan saw it, then deleted and made again under its name: the new one. */
async function reborn(harness: Harness, name: string): Promise<{ old: KubeObject; now: KubeObject }> {
  const old = await harness.create(name, { size: 1 });
  await harness.client.delete(harness.resource, "default", name);
  const now = await harness.create(name, { size: 2 });
  return { old, now };
}

/** The plan's writes through a client of their own (the harness's watch shares the other): its requests, as "METHOD code". */
async function sent(harness: Harness, body: KubeObject, plan: CyclePlan, statusSubresource = true): Promise<{ result: KubeObject | "gone"; requests: string[] }> {
  const client = await KubeClient.connect({ kubeconfig: harness.sandbox.kubeconfigPath });
  const requests: string[] = [];
  client.observe({ requested: (method, _host, code) => void requests.push(`${method} ${code}`) });
  const target: PatchTarget = { client, resource: { ...harness.resource, statusSubresource }, storage: { mode: "status" }, logger: silentLogger };
  try {
    return { result: await applyPlan(target, body, plan, AbortSignal.timeout(5000)), requests };
  } finally {
    client.close();
  }
}

test("a plan for a deleted object writes nothing on the object made again under its name: results, spec, bookkeeping, and its one request is refused", async () => {
  h = await startHarness({});
  const { old, now } = await reborn(h, "reborn");
  const plan = planOf({ user: { spec: { color: "red" } }, results: { create_fn: { uid: old.metadata.uid } }, bookkeeping: { progress: new Map(), base: '{"spec":{"size":1}}' } });
  const { result, requests } = await sent(h, old, plan);
  expect(result).toBe("gone");
  expect(requests).toEqual(["PATCH 422"]); // the object's request goes first, refused for its uid; nothing is retried or re-read
  const after = h.get("reborn");
  expect(after.metadata.uid).toBe(now.metadata.uid);
  expect(after.metadata.resourceVersion).toBe(now.metadata.resourceVersion);
  expect(after.spec).toEqual({ size: 2 });
  expect(after.status?.[STATUS_KEY]).toBeUndefined();
});

test("adding the finalizer for a deleted object does not add it to the object made again under its name", async () => {
  h = await startHarness({});
  const { old, now } = await reborn(h, "reheld");
  const { result, requests } = await sent(h, old, planOf({ finalizer: "add", finalizerFirst: true }));
  expect(result).toBe("gone");
  expect(requests).toEqual(["PATCH 409", "GET 200"]); // a stale resourceVersion or another uid: the read tells
  const after = h.get("reheld");
  expect(after.metadata.finalizers).toBeUndefined();
  expect(after.metadata.resourceVersion).toBe(now.metadata.resourceVersion);
});

test("results alone for a deleted object (one /status PATCH) write nothing on the object made again under its name", async () => {
  h = await startHarness({});
  const { old, now } = await reborn(h, "results");
  const { result, requests } = await sent(h, old, planOf({ results: { create_fn: { uid: old.metadata.uid } } }));
  expect(result).toBe("gone");
  expect(requests).toEqual(["PATCH 409", "GET 200"]); // a stale version, and the read shows another uid
  expect(h.get("results").status).toBeUndefined();
  expect(h.get("results").metadata.resourceVersion).toBe(now.metadata.resourceVersion);
});

test("results for an object another client wrote meanwhile are written on its newer version", async () => {
  h = await startHarness({});
  const object = await h.create("busy", { size: 1 });
  await h.client.patch(h.resource, "default", "busy", { spec: { size: 2 } });
  const { result, requests } = await sent(h, object, planOf({ results: { create_fn: "done" } }));
  expect(result).not.toBe("gone");
  expect(requests).toEqual(["PATCH 409", "GET 200", "PATCH 200"]);
  expect(h.get("busy").status).toEqual({ create_fn: "done" });
  expect(h.get("busy").spec).toEqual({ size: 2 });
});

test("the fence costs no request: a plan for the object itself is one PATCH, as before", async () => {
  h = await startHarness({});
  const object = await h.create("same", { size: 1 });
  const plan = planOf({ user: { spec: { color: "red" } } });
  const { result, requests } = await sent(h, object, plan, false);
  expect(result).not.toBe("gone");
  expect(requests).toEqual(["PATCH 200"]);
  expect(h.get("same").spec).toEqual({ size: 1, color: "red" });
  const results = await sent(h, h.get("same"), planOf({ results: { create_fn: "done" } }));
  expect(results.requests).toEqual(["PATCH 200"]);
  expect(h.get("same").status).toEqual({ create_fn: "done" });
});
