// A handler's context: made when its handler runs unless a filter read it first (then the
// filter's is the handler's), with ctx.runtime counted to the cycle's selection of handlers.

import { afterEach, expect, test } from "bun:test";
import { Registry } from "../../src/declaring/registry.ts";
import type { HandlerContext } from "../../src/declaring/kinds/handlers.ts";
import { startHarness, type Harness } from "./harness.ts";

const EX = "kobunexamples.kobun.dev/v1";
let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

test("a handler's ctx.runtime counts to its cycle's selection, not to when its turn came after a slower handler", async () => {
  const registry = new Registry();
  const runtimes: Record<string, number> = {};
  registry.on.create(EX, async ({ runtime }) => {
    runtimes.first = runtime;
    await Bun.sleep(80); // the first handler's own work, which the second waits for
  }, { id: "first" });
  registry.on.delete(EX, () => {}, { id: "gone" }); // a finalizer first: the handlers run in the cycle after it
  registry.on.create(EX, ({ runtime }) => {
    runtimes.second = runtime;
    h!.poke();
  }, { id: "second" });
  h = await startHarness({ registry });
  await h.create("slow-first", { size: 1 });
  await h.until(() => runtimes.second !== undefined, 10_000);
  expect(runtimes.first).toBeLessThan(80);
  expect(runtimes.second).toBeLessThan(80);
}, 15_000);

test("a when filter and its handler are given the same context", async () => {
  const registry = new Registry();
  const filtered: HandlerContext[] = [];
  let handled: HandlerContext | undefined;
  registry.on.create(EX, (ctx) => {
    handled = ctx;
    h!.poke();
  }, { id: "filtered", when: (ctx) => filtered.push(ctx as HandlerContext) > 0 });
  h = await startHarness({ registry });
  await h.create("with-filter", { size: 1 });
  await h.until(() => handled, 10_000);
  expect(filtered.at(-1)).toBe(handled!);
  expect(handled!.name).toBe("with-filter");
}, 15_000);
