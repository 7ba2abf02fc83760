// The example operator in handlers/ works end to end: create → status.create_fn,
// update → status.update_fn.changed, delete → released (finalizer removed).

import { afterAll, expect, test } from "bun:test";
import { registry } from "../../src/declaring/registry.ts";
import "../../handlers/example.ts";
import { startHarness, type Harness } from "./harness.ts";

let h: Harness | undefined;
afterAll(async () => void (await h?.stop()));

test("handlers/example.ts: create, update and delete a KobunExample", async () => {
  h = await startHarness({ registry });
  await h.create("demo", { size: 1 });
  const created = await h.until(() => h!.get("demo")?.status?.create_fn && h!.get("demo"));
  expect(created.status.create_fn).toEqual({ message: "hello demo" });
  expect(created.metadata.finalizers).toEqual(["kobun.dev/finalizer"]);
  await h.client.patch(h.resource, "default", "demo", { spec: { size: 2 } });
  const updated = await h.until(() => h!.get("demo")?.status?.update_fn && h!.get("demo"));
  expect(updated.status.update_fn).toEqual({ changed: ["spec.size"] });
  await h.client.delete(h.resource, "default", "demo");
  await h.until(() => h!.get("demo") === undefined);
});
