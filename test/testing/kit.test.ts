// kobun/testing: the kit handler authors test with. A sandbox and the operator in-process,
// objects applied, conditions awaited on a watch (no polling), timeouts that say what was
// awaited and what was last seen, and a stop that leaves nothing running.

import { expect, test } from "bun:test";
import Type from "typebox";
import { defineResource, PermanentError, Registry, Toggle } from "kobun";
import { startOperator, UntilTimeoutError } from "kobun/testing";

function greeter() {
  const registry = new Registry();
  const Greetings = defineResource({
    group: "testing.kobun.dev", kind: "Greeting", plural: "greetings",
    schema: {
      spec: Type.Object({ name: Type.String() }),
      status: Type.Object({ create_fn: Type.Optional(Type.Object({ message: Type.String() })) }),
    },
  });
  registry.on.create(Greetings, ({ spec }) => ({ message: `hello ${spec.name}` }), { id: "create_fn" });
  registry.on.delete(Greetings, () => {}, { id: "delete_fn" }); // a finalizer: deletion waits for it
  return { registry, Greetings };
}

test("until resolves with the object once the handler's result is on it, typed by the token", async () => {
  const { registry, Greetings } = greeter();
  await using kit = await startOperator({ registry, logLevel: "silent" });
  await kit.apply(Greetings, { metadata: { name: "hello" }, spec: { name: "world" } });
  const done = await kit.until(Greetings, "hello", (o) => o.status?.create_fn);
  const message: string | undefined = done.status?.create_fn?.message; // typed from the schema
  expect(message).toBe("hello world");
});

test("until waits on one watch of the object: one request for the whole wait, no polling", async () => {
  const { registry, Greetings } = greeter();
  await using kit = await startOperator({ registry, logLevel: "silent" });
  await kit.apply(Greetings, { metadata: { name: "slow" }, spec: { name: "a" } });
  await kit.until(Greetings, "slow", (o) => o.status?.create_fn);
  kit.sandbox.stats.reset();
  const waiting = kit.until(Greetings, "slow", (o) => o.spec.name === "b");
  await kit.sandbox.waitFor((r) => r.verb === "watch" && r.query.includes("metadata.name%3Dslow"), 3000);
  await kit.apply(Greetings, { metadata: { name: "slow" }, spec: { name: "b" } });
  expect((await waiting).spec.name).toBe("b");
  const ours = kit.sandbox.stats.log.filter((r) => r.plural === "greetings" && r.query.includes("metadata.name"));
  // One streaming list (a watch with sendInitialEvents) serves the whole wait.
  expect(ours.map((r) => r.verb)).toEqual(["watch"]);
});

test("until times out naming the object, the condition and the last state seen", async () => {
  const { registry, Greetings } = greeter();
  await using kit = await startOperator({ registry, logLevel: "silent" });
  await kit.apply(Greetings, { metadata: { name: "stuck" }, spec: { name: "never" } });
  const started = performance.now();
  const error = await kit.until(Greetings, "stuck", (o) => o.spec.name === "other", { timeout: 300 }).catch((e) => e);
  expect(performance.now() - started).toBeLessThan(3000);
  expect(error).toBeInstanceOf(UntilTimeoutError);
  expect(error.message).toContain("greetings.testing.kobun.dev default/stuck");
  expect(error.message).toContain('o.spec.name === "other"');
  expect(error.message).toContain("not true after 300 ms");
  expect(error.message).toContain('"spec":{"name":"never"}');
  expect(error.lastSeen.spec.name).toBe("never");
});

test("until on an object that never appears says it was not there", async () => {
  const { registry, Greetings } = greeter();
  await using kit = await startOperator({ registry, logLevel: "silent" });
  const error = await kit.until(Greetings, "absent", () => true, { timeout: 200 }).catch((e) => e);
  expect(error.message).toContain("the object was not there");
});

test("gone waits until the delete handler released the finalizer and the object is deleted", async () => {
  const { registry, Greetings } = greeter();
  await using kit = await startOperator({ registry, logLevel: "silent" });
  await kit.apply(Greetings, { metadata: { name: "bye" }, spec: { name: "x" } });
  const held = await kit.until(Greetings, "bye", (o) => o.metadata.finalizers?.length);
  expect(held.metadata.finalizers).toContain("kobun.dev/finalizer");
  await kit.delete(Greetings, "bye");
  await kit.gone(Greetings, "bye");
  expect(await kit.get(Greetings, "bye")).toBeUndefined();
});

test("stop ends the operator and the sandbox: its port refuses connections afterwards", async () => {
  const { registry } = greeter();
  const kit = await startOperator({ registry, logLevel: "silent" });
  const url = kit.sandbox.url;
  expect((await fetch(`${url}/version`)).ok).toBe(true);
  await kit.stop();
  await kit.stop(); // idempotent
  expect(await fetch(`${url}/version`).then(() => "answered", () => "refused")).toBe("refused");
});

test("an operator that cannot start fails startOperator with its reason, and leaves no sandbox", async () => {
  const registry = new Registry();
  // Fails for good: a plain error is retried, as a handler's (issue 33).
  registry.on.startup(() => { throw new PermanentError("no vault"); }, { id: "vault" });
  const error = await startOperator({ registry, logLevel: "silent" }).catch((e) => e);
  expect(String(error.message)).toContain("no vault");
});

test("a start that never gets ready fails at the kit's timeout, saying what it waited for, with the operator stopped", async () => {
  const registry = new Registry();
  let aborted = false;
  registry.on.startup(async ({ signal, logger }) => { // waits for a vault that never opens, until it is stopped
    logger.info("waiting for the vault");
    await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
    aborted = true;
  }, { id: "vault" });
  registry.on.event("v1/configmaps", () => {});
  const started = performance.now();
  const error = await startOperator({ registry, logLevel: "silent", timeout: 1_000 }).then(() => undefined, (e: Error) => e);
  expect(error?.message).toStartWith("startOperator: the operator was not ready after 1000 ms (the kit's `timeout`)");
  expect(error?.message).toContain("waiting for the vault"); // its last log lines say what it was doing
  expect(aborted).toBe(true); // the operator was stopped before the rejection: nothing of it outlives the test
  expect(performance.now() - started).toBeLessThan(10_000);
}, 20_000);

test("a start frozen by a toggle never unfrozen fails at the kit's timeout, naming who holds the freeze", async () => {
  const registry = new Registry();
  registry.on.event("v1/configmaps", () => {});
  const toggle = new Toggle();
  toggle.freeze("maintenance", "the database is being migrated");
  const error = await startOperator({ registry, toggle, logLevel: "silent", timeout: 500 }).then(() => undefined, (e: Error) => e);
  expect(error?.message).toContain('not ready after 500 ms');
  expect(error?.message).toContain('frozen by the toggle: {"maintenance":"the database is being migrated"}');
}, 20_000);

test("a selector string and a built-in token work too, in another namespace", async () => {
  const registry = new Registry();
  registry.on.create("v1/configmaps", ({ patch }) => { patch.metadata.labels = { seen: "yes" }; }, { id: "seen" });
  await using kit = await startOperator({ registry, namespace: "team-a", logLevel: "silent" });
  await kit.apply("v1/configmaps", { metadata: { name: "c" }, data: { a: "1" } });
  const seen = await kit.until("v1/configmaps", "c", (o) => o.metadata.labels?.seen === "yes");
  expect(seen.metadata.namespace).toBe("team-a");
});

test("a crds path that does not exist names the option, where it was looked for, and what else to do", async () => {
  const { registry } = greeter();
  const error = await startOperator({ registry, logLevel: "silent", crds: ["handlers/not-here.crd.yaml"] }).then(() => undefined, (e: Error) => e);
  expect(error?.message).toStartWith(`startOperator({ crds }): no file "handlers/not-here.crd.yaml" (looked for ${process.cwd()}/handlers/not-here.crd.yaml`);
  expect(error?.message).toContain("defineResource");
});

/** `promise`, or a failure naming `what` after `ms`. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not in ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

test("toggle: frozen, nothing starts and a running handler's signal aborts; unfrozen, it goes on", async () => {
  const registry = new Registry();
  const [running, aborted] = [Promise.withResolvers<void>(), Promise.withResolvers<void>()];
  let calls = 0;
  registry.on.create("v1/configmaps", async ({ name, signal, patch }) => {
    if (name === "held" && calls++ === 0) { // the first run waits until the freeze aborts it
      running.resolve();
      await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
      aborted.resolve();
      throw signal.reason;
    }
    patch.metadata.labels = { seen: "yes" };
  }, { id: "mark" });
  const toggle = new Toggle();
  await using kit = await startOperator({ registry, toggle, logLevel: "silent" });
  await kit.apply("v1/configmaps", { metadata: { name: "held" } });
  await within(running.promise, 5_000, "the first run of held");
  toggle.freeze("test", "frozen by the test");
  await within(aborted.promise, 5_000, "held's signal aborted by the freeze");
  await kit.apply("v1/configmaps", { metadata: { name: "during" } });
  await kit.consistently("v1/configmaps", "during", (o) => o?.metadata.labels?.seen === undefined, { for: 300 });
  toggle.unfreeze("test");
  await kit.until("v1/configmaps", "during", (o) => o.metadata.labels?.seen === "yes");
  await kit.until("v1/configmaps", "held", (o) => o.metadata.labels?.seen === "yes");
});
