// docs/testing.md before the simulation, the parts test/docs-blackbox/testing-kit.test.ts and
// virtual-time.test.ts leave out: startOperator's options (namespace made if missing, memo, timeout,
// logCapture), what the kit does with objects (a status applied as another controller would, a
// merge patch's null, get of nothing, delete then gone), consistently failing at the first state
// that breaks it, until's timeout error (what it awaited, what it last saw or threw, a Secret's
// values hidden), events by uid, logs.until of a line already written, and stop() twice.

import { expect, test } from "bun:test";
import { Registry, resource } from "kobun";
import { ConsistentlyError, startOperator, UntilTimeoutError } from "kobun/testing";
import { Gadgets } from "./helpers.ts";

test("startOperator: its namespace made if missing, memo shared with handlers, timeout the bound of until", async () => {
  const registry = new Registry();
  registry.on.create(Gadgets, ({ memo, event, body }) => {
    event.info(body, "Greeted", `hello from ${memo.region}`);
    return { region: memo.region };
  }, { id: "greet" });
  await using kit = await startOperator({
    registry, namespace: "team-b", memo: { region: "eu" }, timeout: 400, logLevel: "silent", logCapture: "debug",
  });
  const made = await kit.apply(Gadgets, { metadata: { name: "g1" }, spec: { size: 1 } });
  expect(made.metadata.namespace).toBe("team-b");
  const done = await kit.until(Gadgets, "g1", (g) => (g.status as Record<string, unknown> | undefined)?.greet);
  expect((done.status as Record<string, unknown>).greet).toEqual({ region: "eu" });
  const events = await kit.events(made, { until: (list) => list.some((e) => e.reason === "Greeted") });
  expect(events.find((e) => e.reason === "Greeted")?.message).toBe("hello from eu");
  // a line written already resolves at once; debug lines are kept (logCapture), none reach stderr (logLevel)
  expect(await kit.logs.until("Handler 'greet' succeeded.")).toContain("Handler 'greet' succeeded.");
  expect(kit.logs.lines.some((line) => line.includes("DEBUG"))).toBe(true);
  // the kit's timeout (400 ms) bounds a wait that names none
  const started = performance.now();
  const late = await kit.until(Gadgets, "g1", (g) => g.spec.size === 9).catch((e: unknown) => e);
  expect(late).toBeInstanceOf(UntilTimeoutError);
  expect((late as Error).message).toStartWith("until gadgets.blackbox.simulation.kobun.dev team-b/g1 ");
  expect((late as Error).message).toContain('not true after 400 ms; last seen: {"kind":"Gadget"');
  expect(performance.now() - started).toBeLessThan(5_000);
}, 30_000);

test("objects: a status applied or merge-patched as another controller would, get of nothing, delete then gone", async () => {
  const registry = new Registry();
  registry.on.delete(Gadgets, () => {}, { id: "bye" });            // a delete handler: kobun's finalizer holds it
  await using kit = await startOperator({ registry, logLevel: "silent", timeout: 10_000 });
  await kit.apply(Gadgets, { metadata: { name: "g1" }, spec: { size: 1 } });
  // the status subresource: the spec given alongside is ignored, as kube-apiserver ignores it
  const ready = await kit.apply(Gadgets, { metadata: { name: "g1" }, spec: { size: 5 }, status: { ready: true, phase: "Up" } },
    { subresource: "status" });
  expect([ready.spec.size, ready.status?.ready, ready.status?.phase]).toEqual([1, true, "Up"]);
  const patched = await kit.patchStatus(Gadgets, "g1", { phase: null });               // null removes the field
  expect([patched.status?.ready, patched.status?.phase]).toEqual([true, undefined]);
  expect(await kit.get(Gadgets, "nothing")).toBeUndefined();
  await kit.until(Gadgets, "g1", (g) => g.metadata.finalizers?.length);
  await kit.delete(Gadgets, "g1");
  await kit.gone(Gadgets, "g1");
  expect(await kit.get(Gadgets, "g1")).toBeUndefined();
}, 30_000);

test("consistently: undefined while absent; the first state that breaks it fails at once, carried as `state`", async () => {
  await using kit = await startOperator({ registry: new Registry(), logLevel: "silent", timeout: 10_000 });
  expect(await kit.consistently(resource.configmaps, "c1", (c) => c === undefined, { for: 100 })).toBeUndefined();
  await kit.apply(resource.configmaps, { metadata: { name: "c1" }, data: { mode: "slow" } });
  const started = performance.now();
  const broken = await kit.consistently(resource.configmaps, "c1", (c) => c?.data?.mode === "fast", { for: 60_000 })
    .catch((e: unknown) => e);                                     // the first state already breaks it
  expect(broken).toBeInstanceOf(ConsistentlyError);
  expect((broken as ConsistentlyError).state?.data).toEqual({ mode: "slow" });
  expect(performance.now() - started).toBeLessThan(10_000);
  const threw = await kit.consistently(resource.configmaps, "c1", () => { throw new Error("no"); }, { for: 60_000 })
    .catch((e: unknown) => e);
  expect(threw).toBeInstanceOf(ConsistentlyError);
}, 30_000);

test("until: a condition that throws is 'not yet', its last throw told; a Secret's values hidden; stop() twice", async () => {
  const kit = await startOperator({ registry: new Registry(), logLevel: "silent", timeout: 10_000 });
  try {
    await kit.apply(resource.secrets, { metadata: { name: "token" }, stringData: { password: "hunter2-secret" } });
    const error = await kit.until(resource.secrets, "token", (s) => {
      if (!s.data?.missing) throw new Error("no key 'missing' yet");
      return true;
    }, { timeout: 300 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UntilTimeoutError);
    const message = (error as UntilTimeoutError).message;
    expect(message).toContain("no key 'missing' yet");
    expect(message).not.toContain("hunter2-secret");
    expect(message).not.toContain(Buffer.from("hunter2-secret").toString("base64"));
    expect(message).not.toContain("managedFields");
    expect((error as UntilTimeoutError).lastSeen?.metadata.name).toBe("token");
  } finally {
    await kit.stop();
  }
  await kit.stop();                                                // idempotent
}, 30_000);
