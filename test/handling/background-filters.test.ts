// Daemons and timers with `field`/`value` (issue 33), through the test kit against the sandbox: a
// timer ticks only on objects whose field matches, and starts when one comes to match; a daemon
// runs while its field matches and is stopped when it stops matching.

import { expect, test } from "bun:test";
import { startOperator } from "../../src/testing/index.ts";
import { Registry } from "../../src/declaring/registry.ts";

const EX = "kobunexamples.kobun.dev/v1";
const CRD = new URL("../../handlers/kobunexample.crd.yaml", import.meta.url).pathname;

test("a timer with field/value ticks on matching objects only; a daemon stops when its field stops matching", async () => {
  const registry = new Registry();
  const daemonStopped = Promise.withResolvers<string>();
  const daemonStarted: string[] = [];
  registry.on.timer(EX, ({ patch }) => void ((patch.status as Record<string, unknown>).fast = true), {
    id: "fastTick", interval: 0.05, field: "spec.mode", value: "fast",
  });
  registry.on.timer(EX, ({ patch, status }) => {
    (patch.status as Record<string, unknown>).ticks = ((status.ticks as number | undefined) ?? 0) + 1;
  }, {
    id: "everyTick", interval: 0.05,
  });
  registry.on.daemon(EX, async ({ name, signal }) => {
    daemonStarted.push(name);
    await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
    daemonStopped.resolve(name);
  }, { id: "watcher", field: "spec.mode", value: (mode, { labels }) => mode === "fast" && labels.watch === "yes" });
  await using kit = await startOperator({ registry, crds: [CRD], logLevel: "silent" });
  await kit.apply(EX, { metadata: { name: "a", labels: { watch: "yes" } }, spec: { mode: "fast" } });
  await kit.apply(EX, { metadata: { name: "b" }, spec: { mode: "slow" } });
  await kit.until(EX, "a", (o: any) => o.status?.fast);
  const b = await kit.until(EX, "b", (o: any) => o.status?.ticks >= 3); // the other timer ran three times on b
  expect(b.status?.fast).toBeUndefined();
  await kit.apply(EX, { metadata: { name: "b" }, spec: { mode: "fast" } });
  await kit.until(EX, "b", (o: any) => o.status?.fast);
  expect(daemonStarted).toEqual(["a"]); // b has no watch label
  await kit.apply(EX, { metadata: { name: "a", labels: { watch: "yes" } }, spec: { mode: "slow" } });
  expect(await daemonStopped.promise).toBe("a");
});
