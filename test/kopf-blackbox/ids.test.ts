// handlers.md: a handler's result is stored at `status.<id>`, its progress in `status.kobun.progress`
// or in the annotation `kobun.dev/<id>`. An id that would put them over kobun's own keys (status.kobun,
// the diff base kobun.dev/last-handled-configuration) or is empty must be refused at registration,
// naming it; before, "last-handled-configuration" left its object never handled, for ever.

import { expect, test } from "bun:test";
import { Registry, TemporaryError } from "kobun";
import { startOperator } from "kobun/testing";

const CM = "v1/configmaps";

test("ids over kobun's own keys are refused, saying why", () => {
  const registry = new Registry();
  expect(() => registry.on.create(CM, () => {}, { id: "last-handled-configuration" }))
    .toThrow(`on.create handler "last-handled-configuration": its progress would be written over ` +
      "kobun.dev/last-handled-configuration, kobun's diff base");
  expect(() => registry.on.update(CM, () => {}, { id: "last-handled-configuration!" })).toThrow(/kobun's diff base/);
  expect(() => registry.on.update(CM, () => {}, { id: "kobun" }))
    .toThrow(`on.update handler "kobun": its result would be written over status.kobun, kobun's progress and diff base`);
  expect(() => registry.on.timer(CM, () => {}, { id: "kobun", interval: 1 })).toThrow(/^on.timer "kobun": its result/);
  expect(() => registry.on.create(CM, () => {}, { id: "" })).toThrow(`on.create handler "": an id must not be empty`);
  expect(() => registry.on.daemon(CM, () => {}, { id: "" })).toThrow(/an id must not be empty/);
  expect(() => registry.on.daemon(CM, () => {}, { id: "last-handled-configuration" })).not.toThrow();
});

test("an id near the diff base's key (last-handled) is fine: its retried handler's object completes", async () => {
  const registry = new Registry();
  registry.on.create(CM, ({ retry }) => {
    if (retry < 1) throw new TemporaryError("again", { delay: 0.2 });
  }, { id: "last-handled" });
  await using kit = await startOperator({ registry, logLevel: "silent", timeout: 15_000 });
  await kit.apply(CM, { metadata: { name: "a" }, data: { a: "1" } });
  await kit.until(CM, "a", (o) => o.metadata.annotations?.["kobun.dev/last-handled-configuration"] === '{"data":{"a":"1"}}');
}, 30_000);

test("one id runs once per cycle: on.create and on.field sharing one (stacked, as Kopf's decorators) run once", async () => {
  const registry = new Registry();
  const calls: string[] = [];
  registry.on.create(CM, () => { calls.push("create"); }, { id: "sync" });
  registry.on.field(CM, { field: "data.a", id: "sync" }, () => { calls.push("field"); });
  await using kit = await startOperator({ registry, logLevel: "silent", timeout: 15_000 });
  await kit.apply(CM, { metadata: { name: "s" }, data: { a: "1" } });
  await kit.until(CM, "s", (o) => o.metadata.annotations?.["kobun.dev/last-handled-configuration"]);
  await kit.apply(CM, { metadata: { name: "s" }, data: { a: "2" } });
  await kit.until(CM, "s", (o) => o.metadata.annotations?.["kobun.dev/last-handled-configuration"]?.includes('"2"'));
  expect(calls).toEqual(["create", "field"]);
}, 30_000);
