// Kopf's 16-indexing and its indexing recipes, as a Kopf user writes them with kobun's docs. Two
// recipes take another spelling here (from-kopf.md, on.index): Kopf's non-dict result, stored under
// the key None, is `[[null, value]]`; and where Kopf keeps an object's stale entries (its fn
// returned None, or threw with the default errors=IGNORED), kobun leaves the object out until its
// next event, so an index never holds what its fn did not say for the object's current state.

import { expect, test } from "bun:test";
import { Registry, type Index, type IndexKey } from "kobun";
import { startOperator, type TestOperator } from "kobun/testing";
import { within } from "../docs-blackbox/helpers.ts";

const CM = "v1/configmaps";
type Snapshot = Record<string, [IndexKey, unknown[]][]>;

/** An operator whose indexes a "reader" ConfigMap's on.event handler snapshots; `read()` touches it. */
async function indexed(register: (registry: Registry) => void) {
  const registry = new Registry();
  register(registry);
  let waiting = Promise.withResolvers<Snapshot>();
  registry.on.event(CM, ({ indexes }) => {
    waiting.resolve(Object.fromEntries(Object.entries(indexes).map(([id, index]) => [id, [...(index as Index)]])));
  }, { id: "reader", labels: { role: "reader" } });
  const kit = await startOperator({ registry, logLevel: "silent", timeout: 10_000 });
  let n = 0;
  const read = async (): Promise<Snapshot> => {
    waiting = Promise.withResolvers<Snapshot>();
    await kit.apply(CM, { metadata: { name: "reader", labels: { role: "reader" } }, data: { n: String(++n) } });
    return within(waiting.promise, 10_000, "the reader's event");
  };
  return { kit, read };
}

const pod = (kit: TestOperator, name: string, data: Record<string, string>) =>
  kit.apply(CM, { metadata: { name, labels: { role: "pod" } }, data });

test("Kopf's unindexed collection (a non-dict result, key None) is [[null, value]]; tuple keys as Kopf's", async () => {
  const { kit, read } = await indexed((registry) => {
    registry.on.index(CM, ({ name }) => [[null, name]], { id: "pod_names", labels: { role: "pod" } });
    registry.on.index(CM, ({ namespace, name }) => [[[namespace ?? "", name], null]], { id: "pods_dict", labels: { role: "pod" } });
  });
  await using _ = kit;
  await pod(kit, "pod1", {});
  await pod(kit, "pod2", {});
  const seen = await read();
  expect(seen.pod_names).toEqual([[null, ["pod1", "pod2"]]]);
  expect(seen.pods_dict).toEqual([[["default", "pod1"], [null]], [["default", "pod2"], [null]]]);
}, 30_000);

test("Kopf's plain `return name` is refused loudly (not indexed under None), naming the shape", async () => {
  const { kit, read } = await indexed((registry) => {
    registry.on.index(CM, ({ name }) => name as never, { id: "pod_names", labels: { role: "pod" } });
  });
  await using _ = kit;
  await pod(kit, "pod1", {});
  await kit.logs.until(/index fn failed; the object is left out of the index.*an index fn returns \{ key: value \}/);
  expect((await read()).pod_names).toEqual([]);
}, 30_000);

test("no result, or a throw, leaves the object out until its next event (Kopf keeps its stale entries)", async () => {
  const { kit, read } = await indexed((registry) => {
    registry.on.index(CM, ({ name, body }) => {
      const mode = (body as { data?: Record<string, string> }).data?.mode;
      if (mode === "boom") throw new Error("boom");
      return mode === "none" ? undefined : { [mode ?? "?"]: name };
    }, { id: "by_mode", labels: { role: "pod" } });
  });
  await using _ = kit;
  await pod(kit, "pod1", { mode: "one" });
  expect((await read()).by_mode).toEqual([["one", ["pod1"]]]);
  await pod(kit, "pod1", { mode: "none" });
  expect((await read()).by_mode).toEqual([]);
  await pod(kit, "pod1", { mode: "two" });
  expect((await read()).by_mode).toEqual([["two", ["pod1"]]]);
  await pod(kit, "pod1", { mode: "boom" });
  expect((await read()).by_mode).toEqual([]);
}, 30_000);
