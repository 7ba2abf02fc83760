// Peering against the sandbox (seed 000): a higher or equal live peer freezes the operator by
// closing its watch streams; resuming relists so nothing created meanwhile is missed; ghosts
// expire at their deadline; an operator removes its own record on exit.

import { afterEach, beforeEach, expect, test } from "bun:test";
import { peeringResource, type PeeringOptions } from "../../src/peering/index.ts";
import { cm, configmaps, env, eventually, linesAt, record, ToyLoop, until, writeRaw, startPeering, type Env } from "./helpers.ts";

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

const start = (options: Partial<PeeringOptions> & { id: string }) => startPeering(e, running, { lifetime: 2 }, options);

const stored = (name = "default", ns: string | undefined = "default") => e.sandbox.store.get("kobun.dev", "kobunpeerings", ns, name);

test("freezes when a higher-priority record appears: watch streams close; objects created meanwhile are handled after resume", async () => {
  const a = start({ id: "a" });
  const loop = new ToyLoop(e.client, a.toggle);
  await loop.until(() => loop.relists === 1, 5000, "first relist");
  const watchesBefore = e.sandbox.stats.openWatches(); // the peering watch + the configmaps watch

  await writeRaw(e.client, resource, "default", "default", "boss", record(10, 60));
  await until(a.toggle, true);
  await loop.until(() => loop.streamsEnded === 1, 1000, "stream closed by the freeze");
  await eventually(() => e.sandbox.stats.openWatches() === watchesBefore - 1, 1000, "the sandbox to see the configmaps watch closed");
  expect(a.toggle.reasons()["peering:default/default"]).toContain("boss");

  await e.client.create(configmaps, "default", cm("made-while-frozen"));
  await writeRaw(e.client, resource, "default", "default", "boss", null);
  await until(a.toggle, false);
  await loop.until(() => loop.relists === 2, 5000, "the relist after resuming");
  expect(loop.seen.has("made-while-frozen")).toBe(true);
  await loop.stop();

  expect(linesAt(a.lines, "INFO").filter((l) => l.includes("freezing"))).toHaveLength(1);
  expect(linesAt(a.lines, "INFO").filter((l) => l.includes("freezing"))[0]).toContain("peer=boss");
  expect(linesAt(a.lines, "INFO").filter((l) => l.includes("resuming"))).toHaveLength(1);
});

test("a lower-priority operator starts frozen while a higher one runs, and resumes promptly when it exits cleanly", async () => {
  const high = start({ id: "high", priority: 10 });
  await until(high.toggle, false);
  const low = start({ id: "low", priority: 1 });
  const loop = new ToyLoop(e.client, low.toggle);
  await e.sandbox.waitFor((r) => r.verb === "patch" && r.path.includes("kobunpeerings"), 3000); // low's first keep-alive
  await Bun.sleep(50); // let low look at the peers; it must never have started a LIST of configmaps
  expect(low.toggle.frozen).toBe(true);
  expect(e.sandbox.stats.requests("list", { plural: "configmaps" }) + e.sandbox.stats.requests("watch", { plural: "configmaps" })).toBe(0);

  high.controller.abort();
  const exited = Date.now();
  await high.done;
  const resumed = await until(low.toggle, false, 3000);
  expect(resumed - exited).toBeLessThan(1000);
  await loop.until(() => loop.relists === 1, 3000, "first relist after resume");
  await loop.stop();
  expect(linesAt(low.lines, "INFO").filter((l) => l.includes("freezing"))).toHaveLength(1);
});

test("a higher-priority ghost (killed without cleanup) expires after its lifetime; the lower one resumes within 1 s of expiry", async () => {
  const a = start({ id: "a" });
  await until(a.toggle, false);
  const lastseen = Date.now();
  await writeRaw(e.client, resource, "default", "default", "ghost", record(10, 1, lastseen));
  await until(a.toggle, true);
  const resumed = await until(a.toggle, false, 5000);
  const deadline = lastseen + 1000;
  expect(resumed).toBeGreaterThanOrEqual(deadline);
  expect(resumed - deadline).toBeLessThan(1000);
  // and the dead record is removed from the object
  await eventually(() => stored()?.status?.ghost === undefined, 2000, "the ghost's record removed");
  expect(stored()?.status?.a).toBeDefined();
});

test("two operators with the same priority both freeze, each with exactly one warning", async () => {
  // An 8 s lifetime: keep-alives come 2–2.6 s before expiry. With 1 s (a ~0.3 s margin), and again
  // with 3 s (~0.8 s) under a load of 16 on two cores, a keep-alive that late rightly let the twin resume.
  const a = start({ id: "twin-a", priority: 3, lifetime: 8 });
  const b = start({ id: "twin-b", priority: 3, lifetime: 8 });
  await Promise.all([until(a.toggle, true), until(b.toggle, true)]);
  // several keep-alives later (each is a watch event for both), still one warning each
  for (let i = 0; i < 4; i++) await e.sandbox.waitFor((r) => r.verb === "patch" && r.path.includes("kobunpeerings"), 10_000);
  for (const x of [a, b]) {
    expect(x.toggle.frozen).toBe(true);
    const warnings = linesAt(x.lines, "WARN");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("same priority");
    expect(linesAt(x.lines, "INFO").filter((l) => l.includes("freezing"))).toHaveLength(0);
  }
  // when one leaves, the other resumes
  b.controller.abort();
  await b.done;
  await until(a.toggle, false, 3000);
}, 40_000);

test("on exit, an operator removes its own record within a bounded time", async () => {
  const a = start({ id: "leaver" });
  await until(a.toggle, false);
  expect(stored()?.status?.leaver).toMatchObject({ priority: 0, lifetime: 2 });
  const t0 = Date.now();
  a.controller.abort();
  await a.done;
  expect(Date.now() - t0).toBeLessThan(2000);
  expect(stored()?.status?.leaver).toBeUndefined();
});

test("the cluster-wide peering object works the same and is created when missing", async () => {
  const a = start({ id: "cluster-a", namespace: null });
  await until(a.toggle, false);
  expect(e.sandbox.store.get("kobun.dev", "clusterkobunpeerings", undefined, "default")?.status?.["cluster-a"]).toBeDefined();
  await writeRaw(e.client, peeringResource("kobun.dev", false), null, "default", "boss", record(5, 60));
  await until(a.toggle, true);
  expect(a.toggle.reasons()).toHaveProperty(["peering:cluster/default"]);
});

test("the kopf.dev group coordinates with a Kopf operator's record", async () => {
  const { installCRDs } = await import("./helpers.ts");
  await installCRDs(e.client, "kopf.dev");
  const a = start({ id: "kobun", group: "kopf.dev" });
  await until(a.toggle, false);
  // exactly what Kopf writes: isoformat with microseconds and +00:00
  const kopfTime = new Date().toISOString().replace("Z", "000+00:00");
  await writeRaw(e.client, peeringResource("kopf.dev", true), "default", "default", "kopf-pod", { priority: 100, lifetime: 60, lastseen: kopfTime });
  await until(a.toggle, true);
  expect(e.sandbox.store.get("kopf.dev", "kopfpeerings", "default", "default")?.status?.kobun?.lastseen).toMatch(/\+00:00$/);
});
