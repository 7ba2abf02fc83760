// What a watcher keeps per known object with `keep: "identity"` (issue 15: marginal memory per
// object): one record and the few strings a synthetic deletion needs, not a KubeObject of three
// cells with a second copy of its uid. Counted in live cells after a full GC, per object.

import { heapStats } from "bun:jsc";
import { expect, test } from "bun:test";
import { Store } from "../../src/caching/index.ts";
import { relistDone } from "../../src/watching/relisting.ts";

const N = 5000;
const EXAMPLES = { group: "kobun.dev", version: "v1", plural: "kobunexamples", kind: "KobunExample", namespaced: true, statusSubresource: true };

/** An object as the watch decodes it: fresh strings and arrays, like every watch line's. */
function decoded(i: number): any {
  return JSON.parse(JSON.stringify({
    apiVersion: "kobun.dev/v1", kind: "KobunExample",
    metadata: { name: `ex-${i}`, namespace: "default", uid: `6f1c2a4e-0000-4000-8000-${String(i).padStart(12, "0")}`, resourceVersion: String(100000 + i), finalizers: ["kobun.dev/finalizer"], creationTimestamp: "2026-12-02T00:00:00Z", generation: 1 },
    spec: { size: 1 }, status: { create_fn: { message: `hello ex-${i}` } },
  }));
}

function liveCells(): number {
  Bun.gc(true);
  return heapStats().objectCount;
}

test("a known object kept as its identity costs one record and its strings (under 6 live cells)", () => {
  const inventory = new Store(EXAMPLES, { keeps: "identity" }).shelf();
  const before = liveCells();
  for (let i = 0; i < N; i++) inventory.apply("added", decoded(i));
  for (let i = 0; i < N; i++) inventory.apply("modified", decoded(i)); // each change replaces the record
  const perObject = (liveCells() - before) / N;
  // One Identity, the uid (the table's key), name and resourceVersion; the finalizers list is shared.
  expect(perObject).toBeLessThan(6); // 4.5 now; 8.4 when it was a KubeObject (3 objects, an array, a second uid)
  inventory.begin();
  inventory.listed(decoded(0));
  const vanished = [...relistDone(inventory, "2")].filter((event) => event.type === "deleted");
  expect(vanished.length).toBe(N - 1);
  const one = vanished.find((event) => "object" in event && event.object.metadata.name === "ex-7");
  expect(one && "object" in one && one.object).toEqual({
    apiVersion: "kobun.dev/v1", kind: "KobunExample",
    metadata: { name: "ex-7", namespace: "default", uid: "6f1c2a4e-0000-4000-8000-000000000007", resourceVersion: "100007", finalizers: ["kobun.dev/finalizer"] },
  });
  // Each deletion's finalizers are its own: changing one changes no other.
  const [first, second] = vanished.map((event) => ("object" in event ? event.object.metadata.finalizers! : []));
  first!.push("other");
  expect(second).toEqual(["kobun.dev/finalizer"]);
});
