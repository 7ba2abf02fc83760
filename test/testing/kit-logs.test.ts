// The operator's log lines in a test (issue 33, "Embedding and testing"): `kit.logs` keeps them
// (the memory sink itself) and is awaited like `until`; `Logger` and `memorySink` are kobun's
// exports, so an embedder routes `run()`'s log; `run({ memo })` shares a memo with every handler.

import { expect, test } from "bun:test";
import Type from "typebox";
import { defineResource, Logger, memorySink, Registry, run, resolveSettings } from "kobun";
import { startSandbox } from "kobun/sandbox";
import { startOperator } from "kobun/testing";

function greeter() {
  const registry = new Registry();
  const Greetings = defineResource({
    group: "testing.kobun.dev", kind: "Greeting", plural: "greetings",
    schema: { spec: Type.Object({ name: Type.String() }), status: Type.Object({ greet: Type.Optional(Type.String()) }) },
  });
  registry.on.create(Greetings, ({ spec, logger, memo }) => {
    logger.info(`greeting ${spec.name}`, { prefix: memo.prefix });
    return `${memo.prefix ?? "hello"} ${spec.name}`;
  }, { id: "greet" });
  return { registry, Greetings };
}

test("kit.logs holds the operator's lines so far, and until resolves with the first line that matches", async () => {
  const { registry, Greetings } = greeter();
  await using kit = await startOperator({ registry, logLevel: "silent" });
  expect(await kit.logs.until("operator started")).toContain("INFO  operator started");
  expect(kit.logs.lines.some((line) => line.includes("operator started"))).toBe(true);
  const heard = kit.logs.until(/greeting world/); // before the line exists: heard as it is written
  await kit.apply(Greetings, { metadata: { name: "hi" }, spec: { name: "world" } });
  expect(await heard).toMatch(/INFO  greeting world .*greet/);
  expect(await kit.logs.until(/Handler 'greet' succeeded/)).toContain("name=hi");
  expect(kit.logs.lines.filter((line) => line.includes("DEBUG"))).toEqual([]); // kept from "info" by default
});

test("kit.logs.until times out naming the pattern and the last lines", async () => {
  await using kit = await startOperator({ registry: new Registry(), logLevel: "silent", logCapture: "debug" });
  const started = performance.now();
  const error = await kit.logs.until(/never logged/, { timeout: 200 }).catch((e: Error) => e);
  expect(performance.now() - started).toBeLessThan(3000);
  expect((error as Error).message).toStartWith("logs.until(/never logged/): no such line within 200 ms; ");
  expect((error as Error).message).toContain("operator started");
});

test("startOperator({ memo }) is every handler's memo (run's memo option)", async () => {
  const { registry, Greetings } = greeter();
  const memo = { prefix: "bonjour" };
  await using kit = await startOperator({ registry, logLevel: "silent", memo });
  await kit.apply(Greetings, { metadata: { name: "fr" }, spec: { name: "monde" } });
  const done = await kit.until(Greetings, "fr", (g) => g.status?.greet);
  expect(done.status?.greet).toBe("bonjour monde");
  expect(await kit.logs.until("greeting monde")).toContain("prefix=bonjour");
});

test("an embedder routes run()'s log into kobun's memory sink and shares its memo with activities", async () => {
  const sandbox = await startSandbox();
  try {
    const registry = new Registry();
    registry.on.startup(({ memo }) => void (memo.startedBy = "startup"));
    const sink = memorySink("info");
    const memo: Record<string, unknown> = { owner: "embedder" };
    const stop = new AbortController();
    const settings = resolveSettings({
      flags: { kubeconfig: sandbox.kubeconfigPath, standalone: true, namespaces: ["default"] },
    });
    const running = run({ signal: stop.signal, settings, registry, logger: new Logger(sink), memo });
    expect(await sink.until(/operator started/)).toContain("INFO  operator started");
    expect(memo).toEqual({ owner: "embedder", startedBy: "startup" }); // the very object, written by on.startup
    stop.abort();
    await running;
    expect(sink.lines.length).toBeGreaterThan(1);
  } finally {
    await sandbox.stop();
  }
});
