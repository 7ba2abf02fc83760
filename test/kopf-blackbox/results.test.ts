// handlers.md: "What a handler returns (anything but `undefined`) is stored at `status.<id>`". A
// value JSON cannot hold (a cycle, a BigInt) cannot be stored: it must fail that handler, saying so,
// not the object's whole write (every handler of it run again and again, the error naming none).

import { expect, test } from "bun:test";
import { Registry } from "kobun";
import { startOperator } from "kobun/testing";

test("a result JSON cannot hold fails its handler for good, naming it; the others complete once", async () => {
  const registry = new Registry();
  const calls: string[] = [];
  registry.on.create("v1/configmaps", () => {
    calls.push("cyclic");
    const result: Record<string, unknown> = {};
    result.self = result;
    return result;
  }, { id: "cyclic" });
  registry.on.create("v1/configmaps", () => { calls.push("big"); return { size: 10n }; }, { id: "big" });
  registry.on.create("v1/configmaps", () => { calls.push("fine"); }, { id: "fine" });
  await using kit = await startOperator({ registry, logLevel: "info", timeout: 15_000 });
  await kit.apply("v1/configmaps", { metadata: { name: "r" }, data: {} });
  const done = await kit.until("v1/configmaps", "r", (o) => o.metadata.annotations?.["kobun.dev/last-handled-configuration"]);
  const progress = (id: string) => JSON.parse(done.metadata.annotations?.[`kobun.dev/${id}`] ?? "{}");
  expect(progress("cyclic")).toMatchObject({ failure: true, final: true });
  expect(progress("cyclic").message).toStartWith("handler cyclic returned what cannot be stored at status.cyclic (JSON): ");
  expect(progress("big").message).toStartWith("handler big returned what cannot be stored at status.big (JSON): ");
  expect(calls.sort()).toEqual(["big", "cyclic", "fine"]);
  await kit.logs.until(/Handler 'cyclic' failed permanently: handler cyclic returned what cannot be stored/);
}, 30_000);
