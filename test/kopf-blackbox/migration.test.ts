// from-kopf.md, "Taking over objects that Kopf has handled": kobun reads none of Kopf's state; its
// annotations are annotations as any other, so removing them is an update (a handler with a
// `field` under spec does not see it).

import { expect, test } from "bun:test";
import { Registry } from "kobun";
import { startOperator } from "kobun/testing";

const CM = "v1/configmaps";
const KOPF = "kopf.zalando.org/last-handled-configuration";

test("removing Kopf's annotation runs update handlers, not one with a field elsewhere", async () => {
  const registry = new Registry();
  const calls: string[] = [];
  registry.on.update(CM, ({ diff }) => { calls.push(`any ${diff.map((d) => d.path.join(".")).join(",")}`); }, { id: "any" });
  registry.on.update(CM, () => { calls.push("data"); }, { id: "data", field: "data" });
  await using kit = await startOperator({ registry, logLevel: "silent", timeout: 15_000 });
  const base = (o: { metadata: { annotations?: Record<string, string> } }) => o.metadata.annotations?.["kobun.dev/last-handled-configuration"];
  await kit.apply(CM, { metadata: { name: "k", annotations: { [KOPF]: "{}" } }, data: { a: "1" } });
  await kit.until(CM, "k", base);
  await kit.apply(CM, { metadata: { name: "k", annotations: {} }, data: { a: "1" } });
  await kit.until(CM, "k", (o) => !base(o)?.includes("kopf.zalando.org"));
  expect(calls).toEqual(["any metadata"]); // the essence's metadata, emptied, is removed whole
}, 30_000);
