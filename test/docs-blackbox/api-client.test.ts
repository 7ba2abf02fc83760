// docs/api.md (Api, ApiWatchEvent, ApiError, ApplyConflictError, adopt, owner references, label, conditions,
// EventRecorder) and docs/children.md as a user reads them: ctx.api's get/list/create/patch/apply/delete/watch
// run in a handler against the sandbox, its errors, apply's conflicts and force, its signal, typed tokens,
// adopt + garbage collection, the helpers' documented edge cases, and the Events a recorder posts.

import { expect, test } from "bun:test";
import Type from "typebox";
import {
  adopt, ApiError, ApplyConflictError, appendOwnerReference, conditions, defineResource, label, Registry, resource,
  type ConfigMap, type HandlerContext, type KubeObject, type Secret,
} from "kobun";
import { startOperator } from "kobun/testing";
import { within } from "./helpers.ts";

type Ctx = HandlerContext<Secret>;
type Outcome = { ok: unknown } | { error: unknown };

/** A kit whose `probe(fn)` runs `fn` in a create handler (of a fresh Secret), giving back what it returned or threw. */
async function start(o: { namespace?: string; extra?: (r: Registry) => void } = {}) {
  const registry = new Registry();
  const pending = new Map<string, { fn: (ctx: Ctx) => Promise<unknown>; done: (out: Outcome) => void }>();
  registry.on.create(resource.secrets, async (ctx) => {
    const probe = pending.get(ctx.name);
    if (probe) try { probe.done({ ok: await probe.fn(ctx) }); } catch (error) { probe.done({ error }); }
  }, { id: "probe" });
  o.extra?.(registry);
  const kit = await startOperator({ registry, namespace: o.namespace, logLevel: "silent", timeout: 15e3 });
  let n = 0;
  async function probe<R>(fn: (ctx: Ctx) => Promise<R>): Promise<R> {
    const name = `probe-${n++}`;
    const { promise, resolve } = Promise.withResolvers<Outcome>();
    pending.set(name, { fn, done: resolve });
    await kit.apply(resource.secrets, { metadata: { name }, type: "Opaque" });
    const out = await within(promise, 15_000, `the handler of ${name}`);
    if ("error" in out) throw out.error;
    return out.ok as R;
  }
  return { kit, probe };
}

const cm = (name: string, extra: Partial<ConfigMap> = {}): ConfigMap =>
  ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name }, ...extra });

const Gadgets = () => defineResource({
  group: "blackbox.kobun.dev", kind: "Gadget", plural: "gadgets",
  schema: { spec: Type.Object({ size: Type.Integer() }), status: Type.Record(Type.String(), Type.Unknown()) },
});

test("api.get and api.delete of a missing object: an ApiError, 404, the server's Status, method, path", async () => {
  const { kit, probe } = await start();
  await using _ = kit;
  const errors = await probe(async ({ api }) => [
    await api.get("configmaps", "nope").then(() => "found", (e: unknown) => e),
    await api.delete(resource.configmaps, "nope").then(() => "deleted", (e: unknown) => e),
  ]);
  for (const [error, method] of [[errors[0], "GET"], [errors[1], "DELETE"]] as const) {
    expect(error).toBeInstanceOf(ApiError);
    const e = error as ApiError;
    expect([e.code, e.reason, e.method, e.transient, e.path]).toEqual([404, "NotFound", method, false,
      expect.stringContaining("/namespaces/default/configmaps/nope")]);
    expect(e.status).toMatchObject({ kind: "Status", code: 404, reason: "NotFound" });
  }
}, 30_000);

test("api.create: the handled object's namespace by default, another when named; again is 409", async () => {
  const { kit, probe } = await start({ namespace: "team-a" });
  await using _ = kit;
  const resolved = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true,
    statusSubresource: false };                                        // a ResourceRef may be a resolved Resource
  const [made, again, other, forms] = await probe(async ({ api }) => [
    await api.create(cm("made", { data: { a: "1" } })),
    await api.create(cm("made")).catch((e: unknown) => e),
    await api.create({ ...cm("there"), metadata: { name: "there", namespace: "default" } }),
    await Promise.all(["v1/configmaps", "cm", resolved].map((r) => api.get(r, "made").then((o) => o.data?.a, String))),
  ] as const);
  expect(forms).toEqual(["1", "1", "1"]);
  expect([made.metadata.namespace, other.metadata.namespace]).toEqual(["team-a", "default"]);
  expect((await kit.get(resource.configmaps, "made"))?.data).toEqual({ a: "1" });
  expect(again).toBeInstanceOf(ApiError);
  expect([(again as ApiError).code, (again as ApiError).reason]).toEqual([409, "AlreadyExists"]);
  expect(await kit.get(resource.configmaps, "there", { namespace: "default" })).toBeDefined();
}, 30_000);

test("api.list: every page, labelSelector and fieldSelector filter; { namespace } reads another one", async () => {
  const { kit, probe } = await start({ namespace: "team-a" });
  await using _ = kit;
  const web = { app: "web" }, gold = { app: "web", tier: "gold" }, db = { app: "db" };
  for (const [name, labels] of Object.entries({ "web-1": web, "web-2": gold, db })) {
    await kit.apply(resource.configmaps, { metadata: { name, labels } });
  }
  await kit.apply(resource.configmaps, { metadata: { name: "away", labels: web } }, { namespace: "default" });
  for (let i = 0; i < 510; i += 30) {                     // more than a page of the default LIST (500)
    await Promise.all(Array.from({ length: 30 }, (_, j) =>
      kit.apply(resource.configmaps, { metadata: { name: `bulk-${i + j}`, labels: { bulk: "yes" } } })));
  }
  const names = (list: KubeObject[]) => list.map((o) => o.metadata.name!).filter((n) => !n.startsWith("bulk")).sort();
  kit.sandbox.stats.reset();
  const got = await probe(async ({ api }) => ({
    bulk: (await api.list(resource.configmaps, { labelSelector: "bulk=yes" })).length,
    web: names(await api.list(resource.configmaps, { labelSelector: "app=web" })),
    gold: names(await api.list("configmaps", { labelSelector: "app=web,tier=gold" })),
    notWeb: names(await api.list("configmaps", { labelSelector: "app,app!=web" })),
    byName: names(await api.list("configmaps", { fieldSelector: "metadata.name=db" })),
    away: (await api.get(resource.configmaps, "away", { namespace: "default" })).metadata.namespace,
    webEverywhere: (await api.list("configmaps", { namespace: null, labelSelector: "app=web" })).length,
  }));
  expect(kit.sandbox.stats.log.some((r) => r.plural === "configmaps" && r.query.includes("continue="))).toBe(true);
  expect(got).toEqual({ bulk: 510, web: ["web-1", "web-2"], gold: ["web-2"], notWeb: ["db"], byName: ["db"],
    away: "default", webEverywhere: 3 });
}, 30_000);

test("api.patch: a merge patch by default (null removes a key), json, strategic (lists merged by name)", async () => {
  const { kit, probe } = await start();
  await using _ = kit;
  await kit.apply(resource.configmaps, { metadata: { name: "p" }, data: { a: "1", b: "2" } });
  await kit.apply(resource.deployments, { metadata: { name: "d" }, spec: { selector: { matchLabels: { app: "d" } },
    template: { metadata: { labels: { app: "d" } },
      spec: { containers: [{ name: "a", image: "a:1" }, { name: "b", image: "b:1" }] } } } });
  const [merged, jsoned, deployment] = await probe(async ({ api }) => [
    await api.patch(resource.configmaps, "p", { data: { a: null, c: "3" } }),
    await api.patch("configmaps", "p", [{ op: "replace", path: "/data/b", value: "20" }], { type: "json" }),
    await api.patch("apps/v1/deployments", "d",
      { spec: { template: { spec: { containers: [{ name: "a", image: "a:2" }] } } } }, { type: "strategic" }),
  ] as const);
  expect(merged.data).toEqual({ b: "2", c: "3" });
  expect(jsoned.data).toEqual({ b: "20", c: "3" });
  expect(deployment.spec?.template.spec?.containers.map((c) => `${c.name}=${c.image}`)).toEqual(["a=a:2", "b=b:1"]);
}, 30_000);

test("api.apply: as api.fieldManager (kobun); a conflict names fields and managers; force takes them", async () => {
  const { kit, probe } = await start();
  await using _ = kit;
  await kit.apply(resource.configmaps, { metadata: { name: "shared" }, data: { page: "theirs", other: "x" } });
  const got = await probe(async ({ api }) => {
    const mine = await api.apply(cm("mine", { data: { k: "v" } }));
    const conflict = await api.apply(cm("shared", { data: { page: "mine" } })).catch((e: unknown) => e);
    const forced = await api.apply(cm("shared", { data: { page: "mine" } }), { force: true });
    const custom = await api.apply(cm("custom", { data: { k: "v" } }), { fieldManager: "my-tool" });
    return { fieldManager: api.fieldManager, mine, conflict, forced, custom };
  });
  expect(got.fieldManager).toBe("kobun");
  const managers = (o: KubeObject) => (o.metadata.managedFields as { manager: string }[] ?? []).map((m) => m.manager);
  expect([managers(got.mine), managers(got.custom)]).toEqual([["kobun"], ["my-tool"]]);
  expect(got.conflict).toBeInstanceOf(ApplyConflictError);                         // an ApiError, 409
  const conflict = got.conflict as ApplyConflictError;
  expect([conflict instanceof ApiError, conflict.code]).toEqual([true, 409]);
  expect(conflict.conflicts).toEqual([expect.objectContaining({ field: ".data.page", manager: "kobun-testing" })]);
  expect(got.forced.data).toEqual({ page: "mine", other: "x" });     // force takes the field over, leaves the rest
  expect(managers(got.forced).sort()).toEqual(["kobun", "kobun-testing"]);
}, 30_000);

test("a defineResource token through api: create, get, list; status by patch and apply to /status", async () => {
  const Things = Gadgets();
  const { kit, probe } = await start({ extra: (r) => r.on.event(Things, () => {}, { id: "watch-gadgets" }) });
  await using _ = kit;
  const got = await probe(async ({ api }) => {
    const gadget = { apiVersion: "blackbox.kobun.dev/v1", kind: "Gadget", metadata: { name: "g" } };
    const made = await api.create({ ...gadget, spec: { size: 2 } });
    const patched = await api.patch(Things, "g", { status: { phase: "Ready" } }, { subresource: "status" });
    const applied = await api.apply({ ...gadget, status: { seen: 2 } }, { subresource: "status" });
    const read = await api.get(Things, "g");
    const listed = await api.list(Things);
    return { made: made.spec?.size, patched: patched.status, applied: applied.status as object, size: read.spec.size,
      status: read.status, listed: listed.map((o) => o.spec.size) };
  });
  expect(got).toEqual({ made: 2, patched: { phase: "Ready" }, applied: { phase: "Ready", seen: 2 }, size: 2,
    status: { phase: "Ready", seen: 2 }, listed: [2] });
}, 30_000);

test("api.watch: listed, relist-done, added/modified/deleted; a 410 relists, framed; a break ends it", async () => {
  const { kit, probe } = await start();
  await using _ = kit;
  await kit.apply(resource.configmaps, { metadata: { name: "w-old", labels: { watched: "yes" } } });
  await kit.apply(resource.configmaps, { metadata: { name: "w-other" } });
  const got = await probe(async ({ api }) => {
    const seen: string[] = [];
    let resourceVersion = "";
    for await (const event of api.watch(resource.configmaps, { labelSelector: "watched=yes" })) {
      if (event.type === "relist-start") { seen.push(event.type); continue; }
      if (event.type === "relist-done") {
        seen.push(event.type);
        resourceVersion = event.resourceVersion;
        if (seen.filter((s) => s === "relist-done").length === 1) {
          await api.create(cm("w-new", { metadata: { name: "w-new", labels: { watched: "yes" } } }));
        } else await api.patch("configmaps", "w-new", { data: { x: "1" } });
        continue;
      }
      seen.push(`${event.type}:${event.object.metadata.name}`);
      if (event.object.metadata.name !== "w-new") continue;
      if (event.type === "added") kit.sandbox.faults.expireWatches({ plural: "configmaps" });
      else if (event.type === "modified") await api.delete("configmaps", "w-new");
      else if (event.type === "deleted") break;
    }
    return { seen, resourceVersion };
  });
  expect(got.seen[0] === "relist-start" ? got.seen.slice(1) : got.seen).toEqual(["listed:w-old", "relist-done",
    "added:w-new", "relist-start", "listed:w-new", "listed:w-old", "relist-done", "modified:w-new", "deleted:w-new"]);
  expect(got.resourceVersion).toMatch(/^\d+$/);
}, 30_000);

test("ctx.adopt: generateName, namespace, controller reference; deleting the parent collects the child", async () => {
  const { kit, probe } = await start({ namespace: "team-a" });
  await using _ = kit;
  const child = await probe(async ({ api, adopt: own }) =>
    api.create(own({ apiVersion: "v1", kind: "ConfigMap", metadata: {}, data: { k: "v" } })));
  const parent = await kit.get(resource.secrets, "probe-0");
  expect([child.metadata.name?.startsWith("probe-0-"), child.metadata.namespace]).toEqual([true, "team-a"]);
  expect(child.metadata.ownerReferences).toEqual([{ apiVersion: "v1", kind: "Secret", name: "probe-0",
    uid: parent?.metadata.uid, controller: true, blockOwnerDeletion: true }]);
  await kit.delete(resource.secrets, "probe-0");
  await kit.gone(resource.configmaps, child.metadata.name!);
}, 30_000);

test("EventRecorder: post's own type, error as Warning, another object, exception's reason and type", async () => {
  const { kit, probe } = await start();
  await using _ = kit;
  const other = await kit.apply(resource.configmaps, { metadata: { name: "other" } });
  const handled = await probe(async ({ event, body }) => {
    event.post("Audit", "Replayed", "from the backup");
    event.error("Broke", "it broke");
    event.warn(other, "AboutOther", "not the handled one");
    event.exception(new TypeError("bad input"), { reason: "Invalid", message: "parsing:", type: "Error" });
    return body;
  });
  const reasons = ["Replayed", "Broke", "Invalid"];
  const events = await kit.events(handled, { until: (l) => reasons.every((r) => l.some((e) => e.reason === r)) });
  const of = (reason: string) => events.find((e) => e.reason === reason);
  expect([...reasons, "AboutOther"].map((r) => of(r) && `${of(r)?.type}: ${of(r)?.message}`))
    .toEqual(["Audit: from the backup", "Warning: it broke", "Error: parsing: bad input", undefined]);
  const aboutOther = await kit.events(other, { until: (l) => l.some((e) => e.reason === "AboutOther") });
  expect(aboutOther.find((e) => e.reason === "AboutOther"))
    .toMatchObject({ type: "Warning", message: "not the handled one" });
}, 30_000);

test("conditions.set: booleans become True/False, lastTransitionTime moves only on a change, others kept", () => {
  const object = { metadata: { name: "o", generation: 3 }, status: { conditions: [
    { type: "Other", status: "True", lastTransitionTime: "2020-01-01T00:00:00Z" },
    { type: "Ready", status: "True", lastTransitionTime: "2020-01-01T00:00:00Z" },
  ] } };
  const patch: { status: Record<string, unknown> } = { status: {} };
  const at = new Date("2024-05-06T07:08:09Z");
  conditions.set(patch, { type: "Ready", status: false, reason: "Broken" }, { object, now: at, observedGeneration: 7 });
  const read = (p: { status: object }, type: string) => conditions.get({ metadata: {}, status: p.status }, type);
  expect([(patch.status.conditions as unknown[]).length, read(patch, "Other")?.lastTransitionTime])
    .toEqual([2, "2020-01-01T00:00:00Z"]);
  const ready = read(patch, "Ready");
  expect([ready?.status, ready?.observedGeneration, Date.parse(ready!.lastTransitionTime!)]).toEqual(["False", 7, +at]);
  const stays: { status: Record<string, unknown> } = { status: {} };   // the same status later: the time stays
  conditions.set(stays, { type: "Ready", status: "False", reason: "Still" },
    { object: { ...object, status: patch.status }, now: new Date("2030-01-01T00:00:00Z") });
  expect(read(stays, "Ready")).toMatchObject({ reason: "Still", lastTransitionTime: ready!.lastTransitionTime });
  conditions.set(stays, { type: "Fresh", status: true }, { object });          // a new type; the default generation
  expect(read(stays, "Fresh")).toMatchObject({ status: "True", observedGeneration: 3 });
  expect(conditions.isTrue({ metadata: {}, status: stays.status }, "Fresh")).toBe(true);
});

test("appendOwnerReference: once per uid, on a list; label: a missing nested template is not made", () => {
  const owner = { apiVersion: "v1", kind: "Secret", metadata: { name: "s", uid: "u-9" } };
  const objects: KubeObject[] = [cm("a"), cm("b")];
  appendOwnerReference(objects, owner, { controller: false, blockOwnerDeletion: false });
  appendOwnerReference(objects, owner, { controller: false, blockOwnerDeletion: false });
  expect(objects.map((o) => o.metadata.ownerReferences)).toEqual([1, 2].map(() => [{ apiVersion: "v1", kind: "Secret",
    name: "s", uid: "u-9", controller: false, blockOwnerDeletion: false }]));
  const job: KubeObject = { apiVersion: "batch/v1", kind: "Job", metadata: {}, spec: {} };
  label([job, objects[0]!], { role: "worker" }, { nested: ["spec.template", "spec.jobTemplate.spec.template"] });
  expect([job.metadata.labels, objects[0]!.metadata.labels, job.spec])
    .toEqual([{ role: "worker" }, { role: "worker" }, {}]);
}, 10_000);

test("ctx.api carries the handler's signal: once its timeout aborts it, a get is refused, a watch ends", async () => {
  const ended = Promise.withResolvers<string>(), got = Promise.withResolvers<string>();
  const { kit } = await start({ extra: (r) => r.on.create(resource.configmaps, async ({ api, signal }) => {
    signal.addEventListener("abort", () => void api.get("configmaps", "w")
      .then(() => got.resolve("a get still answered"), (e: Error) => got.resolve(`a get refused: ${e.name}`)));
    try {
      for await (const _ of api.watch("configmaps")) { /* until the signal aborts */ }
      ended.resolve(`returned; aborted: ${signal.aborted}`);
    } catch (error) {
      ended.resolve(`threw ${(error as Error).name}; aborted: ${signal.aborted}`);
    }
  }, { id: "watcher", timeout: 0.5, retries: 1 }) });
  await using _ = kit;
  await kit.apply(resource.configmaps, { metadata: { name: "w" } });
  expect(await within(got.promise, 5_000, "the get after the abort")).toMatch(/refused/);
  expect(await within(ended.promise, 5_000, "the end of the watch")).toMatch(/aborted: true$/);
}, 30_000);

test("api.delete: propagationPolicy Orphan leaves the child unowned, Foreground removes it first", async () => {
  const { kit, probe } = await start();
  await using _ = kit;
  await probe(async ({ api }) => {
    for (const p of ["orphan", "fore"]) await api.create(adopt(cm(`${p}-child`), { owner: await api.create(cm(p)) }));
    await api.delete("configmaps", "orphan", { propagationPolicy: "Orphan" });
    await api.delete(resource.configmaps, "fore", { propagationPolicy: "Foreground" });
  });
  await kit.gone(resource.configmaps, "fore");
  expect(await kit.get(resource.configmaps, "fore-child")).toBeUndefined();
  await kit.gone(resource.configmaps, "orphan");
  await kit.until(resource.configmaps, "orphan-child", (o) => !o.metadata.ownerReferences?.length);
}, 30_000);
