// A deletion stops the object's daemons first, then runs its delete handlers (docs/daemons.md);
// a daemon that returns within its cancellationBackoff has its last patch written, so the delete
// handlers that follow read the object with that write in it (DESIGN behaviour 5: never a version
// older than our own write). Against the sandbox, through the kit; and how the newer of two versions is chosen.

import { expect, test } from "bun:test";
import { Registry, resource, sleep } from "../../src/index.ts";
import { startOperator } from "../../src/testing/index.ts";
import { newerOf } from "../../src/reconciling/daemons/background.ts";

test("the delete handlers read the object with the last patch of a daemon that stopped for the deletion", async () => {
  const registry = new Registry();
  const running = Promise.withResolvers<void>();
  const seen: { farewell?: string; note?: string }[] = [];
  registry.on.daemon(resource.configmaps, async ({ stopped, patch, api, name }) => {
    running.resolve();
    while (await sleep(0.05, stopped)) { /* asked to stop by the deletion */ }
    // Its way out takes longer than the batch window, so the deletion's cycle is already waiting for it;
    // then both of its own writes: through ctx.api, and its patch after it returns.
    await Bun.sleep(300);
    await api.patch(resource.configmaps, name, { metadata: { labels: { note: "left" } } });
    patch.metadata.annotations = { farewell: "said" };
  }, { id: "follower", cancellationBackoff: 5 });
  registry.on.delete(resource.configmaps, ({ body }) => {
    seen.push({ farewell: body.metadata.annotations?.farewell, note: body.metadata.labels?.note });
  }, { id: "cleanup" });
  await using kit = await startOperator({ registry, logLevel: "silent", timeout: 10_000 });
  await kit.apply(resource.configmaps, { metadata: { name: "c" }, data: { a: "1" } });
  await running.promise;
  await kit.until(resource.configmaps, "c", (o) => o.metadata.annotations?.["kobun.dev/last-handled-configuration"]);
  await kit.delete(resource.configmaps, "c");
  await kit.gone(resource.configmaps, "c");
  expect(seen).toEqual([{ farewell: "said", note: "left" }]);
}, 20_000);

test("a daemon's write whose version cannot be ordered against the deletion's (not decimal) does not replace it", () => {
  const deleting = { metadata: { name: "c", resourceVersion: "b7", deletionTimestamp: "2026-01-01T00:00:00Z" } };
  const wrote = { metadata: { name: "c", resourceVersion: "a9" } };
  // Versions of another storage are only compared for equality (kube/versions.ts): the deletion's body stays.
  expect(newerOf(deleting, wrote)?.metadata.deletionTimestamp).toBe("2026-01-01T00:00:00Z");
  expect(newerOf({ metadata: { resourceVersion: "10" } }, { metadata: { resourceVersion: "9" } })?.metadata)
    .toEqual({ resourceVersion: "10" });
  expect(newerOf({ metadata: { resourceVersion: "9" } }, { metadata: { resourceVersion: "10" } })?.metadata)
    .toEqual({ resourceVersion: "10" });
});
