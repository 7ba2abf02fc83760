// A reconcile of a cluster-scoped resource (defineResource's `scope: "Cluster"`) tested with the kit
// in a namespace of its own (docs/testing.md, startOperator's `namespace`; kit.events): its owned
// namespaced children wake it, a watches map's key (namespace defaulted to the watched object's)
// finds it, ctx.cache.list with no namespace reads every namespace watched, and kit.events finds
// its Events, which are posted in "default" as on a cluster. Before, kit.events looked for them in
// the kit's namespace and timed out with "0 Events in team-a". Its ctx.cache.get of a namespaced
// resource must name the namespace (it has none to lend): without one it is an error naming it,
// where it was a silent miss (a child "missing" every time, made again at each run). A watches map's key
// that names a namespace finds it all the same (controller-runtime's cache ignores the namespace of a
// cluster-scoped key); before, it woke nothing, silently.

import { expect, test } from "bun:test";
import { adopt, defineResource, PermanentError, Registry, resource, TemporaryError } from "kobun";
import Type from "typebox";
import { Calls, operate } from "./kit.ts";

const Tenants = defineResource({
  group: "blackbox.kobun.dev", kind: "Tenant", plural: "tenants", scope: "Cluster",
  schema: { spec: Type.Object({ quota: Type.Optional(Type.Number()) }), status: Type.Object({ ready: Type.Optional(Type.Boolean()) }) },
});

test("a cluster-scoped reconcile: woken by its namespaced child and a watched Secret; its Events found", async () => {
  const calls = new Calls();
  const listed: string[][] = [];
  const registry = new Registry();
  registry.on.reconcile(Tenants, async (ctx) => {
    calls.record(ctx);
    listed.push(ctx.cache.list(resource.configmaps).map((c) => `${c.metadata.namespace}/${c.metadata.name}`));
    const child = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `${ctx.name}-quota`, namespace: "team-a" } };
    await ctx.api.apply(adopt({ ...child, data: { quota: String(ctx.spec.quota ?? 0) } }, { owner: ctx.body }));
    if (ctx.spec.quota === undefined) throw new PermanentError("spec.quota is missing");
    ctx.patch.status.ready = true;
  }, {
    owns: [resource.configmaps],
    watches: [{ resource: resource.secrets, map: (s) => (s.metadata.labels?.tenant ? { name: s.metadata.labels.tenant } : null) }],
  });
  await using kit = await operate(registry, undefined, { namespace: "team-a" });
  const made = await kit.apply(Tenants, { metadata: { name: "acme" }, spec: {} });
  const events = await kit.events(made, { until: (list) => list.some((e) => e.reason === "Reconcile") });
  expect(events.find((e) => e.reason === "Reconcile")!.metadata.namespace).toBe("default");
  await kit.until(resource.configmaps, "acme-quota", (c) => c.metadata.ownerReferences?.[0]?.uid === made.metadata.uid);
  // A PermanentError waits for a trigger: someone else's change of its child is one.
  const before = calls.all.length;
  await kit.apply(resource.configmaps, { metadata: { name: "acme-quota", labels: { seen: "yes" } } }, { namespace: "team-a" });
  await calls.until((c) => c.length > before, "the wake by its child");
  await kit.apply(Tenants, { metadata: { name: "acme" }, spec: { quota: 3 } });
  await kit.until(Tenants, "acme", (t) => t.status?.ready);
  const settled = calls.all.length;
  await kit.apply(resource.secrets, { metadata: { name: "acme-token", labels: { tenant: "acme" } }, stringData: { t: "x" } });
  await calls.until((c) => c.length > settled, "the wake by the watched Secret");
  expect(listed.at(-1)).toEqual(["team-a/acme-quota"]);
}, 60_000);

test("a cluster-scoped reconcile's ctx.cache.get of a namespaced resource without a namespace is an error naming it", async () => {
  const seen = Promise.withResolvers<unknown>();
  const registry = new Registry();
  registry.on.reconcile(Tenants, (ctx) => {
    const attempt = (namespace?: string | null) => {
      try {
        return ctx.cache.get(resource.configmaps, "settings", namespace)?.metadata.namespace;
      } catch (error) {
        return (error as Error).message;
      }
    };
    // The ConfigMap comes on a stream of its own: until the cache has it, again (a TemporaryError's short delay).
    if (attempt("team-a") === undefined) throw new TemporaryError("settings not cached yet", { delay: 0.05 });
    seen.resolve({ given: attempt("team-a"), none: attempt(), everywhere: attempt(null) });
  }, { owns: [resource.configmaps] });
  await using kit = await operate(registry, undefined, { namespace: "team-a" });
  await kit.apply(resource.configmaps, { metadata: { name: "settings" } });
  await kit.apply(Tenants, { metadata: { name: "acme" }, spec: {} });
  const error = (why: string) => new RegExp(`ctx\\.cache\\.get\\(configmaps, "settings"\\) names no namespace \\(${why}.*\\): name one as its third argument`);
  expect(await seen.promise).toEqual({
    given: "team-a", none: expect.stringMatching(error("and there is none to default to")),
    everywhere: expect.stringMatching(error("null is every namespace, which is for list")),
  });
}, 60_000);

test("a watches map's key with a namespace wakes a cluster-scoped object all the same", async () => {
  const calls = new Calls();
  const registry = new Registry();
  registry.on.reconcile(Tenants, (ctx) => void calls.record(ctx), {
    watches: [{
      resource: resource.secrets,
      map: (s) => (s.metadata.labels?.tenant ? { name: s.metadata.labels.tenant, namespace: s.metadata.namespace } : null),
    }],
  });
  await using kit = await operate(registry, undefined, { namespace: "team-a" });
  await kit.apply(Tenants, { metadata: { name: "acme" }, spec: {} });
  await calls.until((c) => c.length === 1, "the first run");
  await kit.apply(resource.secrets, { metadata: { name: "acme-token", labels: { tenant: "acme" } }, stringData: { t: "x" } });
  await calls.until((c) => c.length === 2, "the wake by the Secret");
  expect(calls.all.map((c) => [c.name, c.namespace])).toEqual([["acme", undefined], ["acme", undefined]]);
}, 60_000);
