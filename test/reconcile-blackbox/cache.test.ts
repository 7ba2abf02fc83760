// ctx.cache (docs/reconcile.md, "The cache"): get and list of what the operator watches, by
// name, label selector and index, in the reconciled object's namespace by default; a resource the
// operator does not watch is an error naming it and how to declare it; an unknown index is an
// error.

import { expect, test } from "bun:test";
import { adopt, Registry, resource } from "kobun";
import { Calls, operate, Widgets } from "./kit.ts";

/** The message of what `read` throws, up to its hint in parentheses; "read" when it does not throw. */
function refusal(read: () => unknown): string {
  try {
    read();
    return "read";
  } catch (error) {
    return (error as Error).message.split(" (")[0]!;
  }
}

test("get, list by label and by index; unwatched resources, namespaces and unknown indexes are named errors", async () => {
  const seen = new Map<string, unknown>();
  const calls = new Calls();
  const registry = new Registry();
  registry.on.index(resource.configmaps, function byWidget(ctx) {
    return ctx.labels.widget ? { [ctx.labels.widget]: true } : undefined;
  });
  registry.on.reconcile(Widgets, (ctx) => {
    try {
      if (ctx.name === "secrets") ctx.cache.get(resource.secrets, "x");
      if (ctx.name === "badindex") ctx.cache.list(resource.configmaps, { index: { id: "nope", key: "x" } });
      seen.set(ctx.name, {
        got: ctx.cache.get(resource.configmaps, "one")?.data,
        labelled: ctx.cache.list(resource.configmaps, { labelSelector: "widget=w,tier!=db" }).map((c) => c.metadata.name),
        indexed: ctx.cache.list(resource.configmaps, { index: { id: "byWidget", key: ctx.name } })
          .map((c) => c.metadata.name).sort(),
        elsewhere: refusal(() => ctx.cache.list(resource.configmaps, { namespace: "other" })),
      });
    } catch (error) {
      seen.set(ctx.name, (error as Error).message);
    } finally {
      calls.record(ctx);
    }
  }, { watches: [{ resource: resource.configmaps, map: (cm) => (cm.metadata.labels?.widget ? { name: cm.metadata.labels.widget } : null) }] });
  await using kit = await operate(registry);
  await kit.apply(resource.configmaps, { metadata: { name: "one", labels: { widget: "w" } }, data: { a: "1" } });
  await kit.apply(resource.configmaps, { metadata: { name: "two", labels: { widget: "w", tier: "db" } } });
  await kit.apply(resource.configmaps, { metadata: { name: "three", labels: { widget: "v" } } });
  for (const name of ["w", "secrets", "badindex"]) await kit.apply(Widgets, { metadata: { name }, spec: {} });
  await calls.until((c) => ["w", "secrets", "badindex"].every((n) => c.some((x) => x.name === n)), "three reconciles");
  await calls.until(() => (seen.get("w") as any)?.indexed?.length === 2, "the index to hold both of w's ConfigMaps");
  const elsewhere = 'ctx.cache cannot read configmaps in namespace "other": the operator does not watch that namespace';
  expect(seen.get("w")).toEqual({ got: { a: "1" }, labelled: ["one"], indexed: ["one", "two"], elsewhere });
  const unwatched = String(seen.get("secrets"));
  expect(unwatched).toContain("secrets");
  expect(unwatched).toMatch(/owns/);
  expect(unwatched).toMatch(/watches/);
  expect(unwatched).toMatch(/index/);
  expect(String(seen.get("badindex"))).toContain("nope");
}, 60_000);
