// docs/testing.md and the activities of docs/handlers.md, as a user meets them: startup retried
// (TemporaryError, then success logged as Kopf logs it), a startup that fails for good rejecting
// startOperator, cleanup run at the stop, one virtual-clock operator at a time, and simulate()
// finding the non-idempotent create of the guide's first example, with the report it shows.

import { expect, test } from "bun:test";
import Type from "typebox";
import { adopt, defineResource, FatalError, PermanentError, Registry, TemporaryError } from "kobun";
import { simulate, SimulationFailure, startOperator, type World } from "kobun/testing";

test("on.startup is retried after a TemporaryError's delay; its success is logged; on.cleanup runs at the stop", async () => {
  const registry = new Registry();
  const attempts: number[] = [];
  let cleaned = false;
  registry.on.startup(({ retry }) => {
    attempts.push(retry);
    if (retry < 2) throw new TemporaryError(`going to succeed in ${2 - retry} attempts`, { delay: 0.1 });
  }, { id: "startup_fn_retried", retries: 5 });
  registry.on.cleanup(() => { cleaned = true; }, { id: "bye" });
  registry.on.event("v1/configmaps", () => {});
  const kit = await startOperator({ registry, logLevel: "silent", timeout: 15_000 });
  try {
    expect(attempts).toEqual([0, 1, 2]);
    await kit.logs.until("Activity 'startup_fn_retried' succeeded.");
  } finally {
    await kit.stop();
  }
  expect(cleaned).toBe(true);
}, 30_000);

test("refusals that say why: a retry option on a cleanup, an Event with no object in an activity or an empty reason", async () => {
  const registry = new Registry();
  expect(() => registry.on.cleanup(() => {}, { retries: 3 } as never)).toThrow(/only on.startup is retried/);
  const said: string[] = [];
  registry.on.startup(({ event }) => {
    try { (event.info as (reason: string) => void)("Started"); } catch (e) { said.push(String(e)); }
  }, { id: "s" });
  registry.on.create("v1/configmaps", ({ event }) => {
    try { event.info(""); } catch (e) { said.push(String(e)); }
    return undefined;
  }, { id: "tell" });
  await using kit = await startOperator({ registry, logLevel: "silent", timeout: 15_000 });
  await kit.apply("v1/configmaps", { metadata: { name: "c" } });
  await kit.logs.until("Handler 'tell' succeeded.");
  expect(said).toEqual([
    expect.stringMatching(/^TypeError: .*name the object the Event is about/),
    expect.stringMatching(/^TypeError: .*the reason must be a non-empty string/),
  ]);
}, 30_000);

test("an operator with nothing to do warns at start: `no handlers registered`", async () => {
  await using kit = await startOperator({ registry: new Registry(), logLevel: "silent", timeout: 15_000 });
  expect(kit.logs.lines.some((line) => line.includes("no handlers registered"))).toBe(true);
}, 30_000);

test("a startup handler that fails for good makes startOperator reject, naming it", async () => {
  const registry = new Registry();
  registry.on.startup(() => { throw new PermanentError("no vault"); }, { id: "vault" });
  registry.on.event("v1/configmaps", () => {});
  const error = await startOperator({ registry, logLevel: "silent", timeout: 15_000 }).then(() => undefined, (e: unknown) => e);
  expect(String((error as Error)?.message)).toMatch(/vault/);
  // Kopf's KopfRunner has exit_code: here the cause is run()'s FatalError, with the CLI's exit code.
  expect((error as Error).cause).toBeInstanceOf(FatalError);
  expect(((error as Error).cause as FatalError).exitCode).toBe(6);
}, 30_000);

test("a handled resource the API server does not serve makes startOperator reject: exit code 5, naming it", async () => {
  const registry = new Registry();
  registry.on.create("widgets.nothere.kobun.dev/v1", () => {}, { id: "w" });
  const error = await startOperator({ registry, logLevel: "silent", timeout: 15_000 }).then(() => undefined, (e: unknown) => e);
  expect((error as Error).message).toContain("widgets.nothere.kobun.dev/v1 is not served");
  expect(((error as Error).cause as FatalError).exitCode).toBe(5);
}, 30_000);

test("one virtual-clock operator at a time: a second startOperator({ clock: \"virtual\" }) is refused", async () => {
  const registry = new Registry();
  registry.on.event("v1/configmaps", () => {});
  await using kit = await startOperator({ registry, clock: "virtual", logLevel: "silent", timeout: 15_000 });
  await expect(startOperator({ registry, clock: "virtual", logLevel: "silent" })).rejects.toThrow(/virtual/);
  await kit.advance(1);
}, 30_000);

test("simulate() finds the guide's non-idempotent create: a crash after the first child, two children where the reference has one", async () => {
  const Widgets = defineResource({
    group: "blackbox.kobun.dev", kind: "Widget", plural: "widgets",
    schema: { spec: Type.Object({ replicas: Type.Optional(Type.Integer()) }), status: Type.Object({}) },
  });
  const registry = new Registry();
  registry.on.create(Widgets, async ({ name, body, api }) => {
    for (const part of ["config", "secret-ref"]) {
      const child = { apiVersion: "v1", kind: "ConfigMap", metadata: { generateName: `${name}-${part}-` }, data: {} };
      await api.create(adopt(child, { owner: body }));
    }
  }, { id: "children" });
  const error = await simulate({
    registry,
    scenario: async (world) => {
      await world.apply(Widgets, { metadata: { name: "w1" }, spec: { replicas: 1 } });
    },
  }).then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(SimulationFailure);
  const report = (error as Error).message;
  expect(report).toContain(`simulate: schedule "1/0" fails (0 other schedules passed)`);   // as the guide shows it
  expect(report).toContain("killed right after its 1st create of configmaps w1-config-*");
  expect(report).toMatch(/configmaps default\/w1-(config|secret-ref)-\*: 2 objects where the reference has 1/);
  expect(report).toContain("replay: simulate({ ...options, seed:");
  const failure = error as SimulationFailure;
  expect(failure.report).toBe(report);
  expect(failure.failure.check).toBe("convergence");
  expect(failure.schedule).toBeDefined();
}, 60_000);

test("simulate() refuses an unknown fault kind and a bad KOBUN_SIMULATE_SCHEDULES; a passing one resolves { runs, crashPoints, ms }", async () => {
  const registry = new Registry();
  registry.on.create("v1/configmaps", ({ patch }) => { patch.metadata.labels = { seen: "yes" }; }, { id: "seen" });
  const scenario = async (world: World) => { await world.apply("v1/configmaps", { metadata: { name: "c" } }); };
  await expect(simulate({ registry, scenario, faults: { bogus: true } as never })).rejects.toThrow(/no fault kind "bogus"/);
  const before = process.env.KOBUN_SIMULATE_SCHEDULES;
  process.env.KOBUN_SIMULATE_SCHEDULES = "abc";
  try {
    await expect(simulate({ registry, scenario })).rejects.toThrow(/KOBUN_SIMULATE_SCHEDULES must be a positive whole number/);
  } finally {
    if (before === undefined) delete process.env.KOBUN_SIMULATE_SCHEDULES;
    else process.env.KOBUN_SIMULATE_SCHEDULES = before;
  }
  const passed = await simulate({ registry, scenario, schedules: 4 });
  expect(passed.runs.length).toBe(4);
  expect(passed.runs.every((r) => r.ok)).toBe(true);
  expect(passed.crashPoints).toBeGreaterThanOrEqual(1);
}, 60_000);

test("kit.events of a namespaced object given by its uid alone finds its Events in its own namespace", async () => {
  // Before, an object with a uid and no namespace was taken for a cluster-scoped one and its Events
  // looked for in "default" only: a kit in another namespace found none of them.
  const registry = new Registry();
  registry.on.create("v1/configmaps", ({ body, event }) => { event.info(body, "Seen", "seen it"); }, { id: "see" });
  await using kit = await startOperator({ registry, namespace: "team-a", logLevel: "silent" });
  const made = await kit.apply("v1/configmaps", { metadata: { name: "settings" }, data: {} });
  const byUid = { kind: "ConfigMap", metadata: { uid: made.metadata.uid } };
  const events = await kit.events(byUid, { until: (list) => list.some((e) => e.reason === "Seen") });
  expect(events.find((e) => e.reason === "Seen")?.metadata.namespace).toBe("team-a");
  expect((await kit.events(byUid)).map((e) => e.reason)).toContain("Seen");     // without `until`, the same
}, 15_000);

test("kit.list: the objects there are, in the kit's namespace, another, or all; a label selector narrows them", async () => {
  await using kit = await startOperator({ registry: new Registry(), logLevel: "silent", timeout: 10_000, namespace: "team-a" });
  await kit.apply("v1/configmaps", { metadata: { name: "a", labels: { app: "shop" } } });
  await kit.apply("v1/configmaps", { metadata: { name: "b", labels: { app: "blog" } } });
  await kit.apply("v1/namespaces", { metadata: { name: "team-b" } });
  await kit.apply("v1/configmaps", { metadata: { name: "c", labels: { app: "shop" } } }, { namespace: "team-b" });
  const names = (list: { metadata: { name?: string } }[]) => list.map((o) => o.metadata.name).sort();
  expect(names(await kit.list("v1/configmaps", { labelSelector: "app" }))).toEqual(["a", "b"]);
  expect(names(await kit.list("v1/configmaps", { labelSelector: "app=shop", namespace: null }))).toEqual(["a", "c"]);
  expect(names(await kit.list("v1/configmaps", { namespace: "team-b", labelSelector: "app" }))).toEqual(["c"]);
}, 15_000);
