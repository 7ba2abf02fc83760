// Three newly documented features, tried from the docs only: a watches map's second argument `{ cache }`
// (docs/reconcile.md "What runs it"; docs/api.md WatchedResource, MapTools), `conditions.schema` for a
// defineResource status (docs/children.md "Conditions"; docs/api.md conditions, ConditionsSchema), and the
// warning when a /status write's answer lacks a field it sent (docs/children.md "Conditions").

import { expect, test } from "bun:test";
import {
  conditions, defineResource, Registry, resource, type ObjectKey, type ReconcileContext, type TargetObject,
} from "kobun";
import Type from "typebox";
import { Calls, operate, runOperator, Widgets, WIDGETS_PATH } from "./kit.ts";

type Named = { metadata: { name?: string; namespace?: string } };
const keysOf = (list: Named[]) => list.map(({ metadata: m }) => ({ name: m.name!, namespace: m.namespace }));
const show = (keys: ObjectKey[]) => keys.map((k) => `${k.namespace}/${k.name}`).sort();

type Mapped = Map<string, { keys: string[]; at: number }>; // what each map call named (by the mapped name), when

/** Resolves once every map of `names` ran and each object it named was reconciled after it. */
function woken(calls: Calls, mapped: Mapped, names: string[], timeoutMs = 30_000) {
  return calls.until(() => names.every((name) => {
    const map = mapped.get(name);
    return map?.keys.every((key) => calls.all.some((c) => `${c.namespace}/${c.name}` === key && c.at > map.at));
  }), `the wakes of ${names.join(", ")}`, timeoutMs);
}

const widget = (name: string, note: string, team: string) =>
  ({ apiVersion: "blackbox.kobun.dev/v1", kind: "Widget", metadata: { name, labels: { team } }, spec: { note } });
const OTHER_WIDGETS = WIDGETS_PATH.replace("/default/", "/other/");

test("a map's cache: list by index, label and namespace, get; in the watched object's namespace", async () => {
  const calls = new Calls();
  const mapped: Mapped = new Map();
  const registry = new Registry();
  registry.on.index(Widgets, ({ spec }) => (spec.note ? { [spec.note]: true } : undefined), { id: "byNote" });
  registry.on.reconcile(Widgets, (ctx) => void calls.record(ctx), {
    watches: [{
      resource: resource.configmaps,
      map: (cm, { cache }) => {
        const n1 = { index: { id: "byNote", key: "n1" } };
        const found = ({
          index: () => cache.list(Widgets, n1),
          label: () => cache.list(Widgets, { labelSelector: "team=red" }),
          named: () => cache.list(Widgets, { namespace: "default", labelSelector: "team=red" }),
          every: () => cache.list(Widgets, { namespace: null, ...n1 }),
          get: () => [cache.get(Widgets, "c"), cache.get(Widgets, "b"), cache.get(Widgets, "b", "default")]
            .filter((w) => w !== undefined),
        } as Record<string, () => Named[]>)[cm.metadata.name!]?.();
        if (!found) return null;
        const keys = keysOf(found);
        mapped.set(cm.metadata.name!, { keys: show(keys), at: performance.now() });
        return keys;
      },
    }],
  });
  await using op = await runOperator(registry, {
    namespaces: ["default", "other"],
    before: async (post) => {
      await post("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: "other" } });
      await post(WIDGETS_PATH, widget("a", "n1", "red"));
      await post(WIDGETS_PATH, widget("b", "n2", "blue"));
      await post(OTHER_WIDGETS, widget("a", "n1", "red"));
      await post(OTHER_WIDGETS, widget("c", "n3", "red"));
    },
  });
  await calls.until((c) => c.length >= 4, "the four start-up runs", 30_000);
  const OTHER_MAPS = "/api/v1/namespaces/other/configmaps";
  for (const name of ["index", "label", "named", "get"]) await op.post(OTHER_MAPS, { metadata: { name } });
  await op.post("/api/v1/namespaces/default/configmaps", { metadata: { name: "every" } });
  await woken(calls, mapped, ["index", "label", "named", "get", "every"]);
  expect(Object.fromEntries([...mapped].map(([name, { keys }]) => [name, keys]))).toEqual({
    index: ["other/a"],
    label: ["other/a", "other/c"],
    named: ["default/a"],
    get: ["default/b", "other/c"],
    every: ["default/a", "other/a"],
  });
}, 90_000);

test("a cluster-scoped watched object (a Namespace) maps to namespaced objects through the cache", async () => {
  const calls = new Calls();
  const mapped: Mapped = new Map();
  const views: unknown[] = [];
  const registry = new Registry();
  registry.on.reconcile(Widgets, (ctx) => void calls.record(ctx), {
    watches: [{
      resource: resource.namespaces,
      map: ({ metadata: ns }, { cache }) => {
        if (!ns.labels?.probe) return null;
        const own = keysOf(cache.list(Widgets, { namespace: ns.name }));
        // No namespace given: every namespace watched; a get names the namespace.
        views.push({ all: show(keysOf(cache.list(Widgets))), got: keysOf([cache.get(Widgets, "b", ns.name)!]) });
        mapped.set(ns.name!, { keys: show(own), at: performance.now() });
        return own;
      },
    }],
  });
  await using op = await runOperator(registry, {
    namespaces: ["default", "other"],
    before: async (post) => {
      await post("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: "other" } });
      await post(WIDGETS_PATH, widget("a", "n", "red"));
      await post(OTHER_WIDGETS, widget("a", "n", "red"));
      await post(OTHER_WIDGETS, widget("b", "n", "red"));
    },
  });
  await calls.until((c) => c.length >= 3, "the three start-up runs", 30_000);
  const response = await fetch(`${op.sandbox.url}/api/v1/namespaces/other`, {
    method: "PATCH", headers: { "content-type": "application/merge-patch+json" },
    body: JSON.stringify({ metadata: { labels: { probe: "yes" } } }),
  });
  expect(response.status).toBe(200);
  await woken(calls, mapped, ["other"]);
  expect(mapped.get("other")?.keys).toEqual(["other/a", "other/b"]);
  expect(views[0]).toEqual({ all: ["default/a", "other/a", "other/b"], got: [{ name: "b", namespace: "other" }] });
}, 90_000);

test("a cluster-scoped watched object's map gives a key without a namespace: warned once, wakes nothing", async () => {
  const calls = new Calls();
  const registry = new Registry();
  const second = Promise.withResolvers<void>();
  registry.on.reconcile(Widgets, (ctx) => void calls.record(ctx), {
    watches: [{
      resource: resource.namespaces,
      map: (ns) => {
        if (ns.metadata.name === "probed-too") second.resolve();
        return ns.metadata.labels?.probe ? { name: "w" } : null;
      },
    }],
  });
  await using kit = await operate(registry, undefined, { timeout: 30_000 });
  await kit.apply(Widgets, { metadata: { name: "w" }, spec: {} });
  await calls.until((c) => c.length >= 1, "w's first run", 30_000);
  await kit.apply(resource.namespaces, { metadata: { name: "probed", labels: { probe: "yes" } } });
  expect(String(await kit.logs.until(/without a namespace/))).toMatch(/widgets are namespaced/);
  await kit.apply(resource.namespaces, { metadata: { name: "probed-too", labels: { probe: "yes" } } });
  await second.promise; // the second namespace's event was mapped
  await kit.consistently(Widgets, "w", () => calls.of("w").length === 1, { for: 300 });
  expect(kit.logs.lines.filter((line) => /without a namespace/.test(String(line))).length).toBe(1);
}, 90_000);

test("a map reading what the operator does not watch: logged, wakes nothing; a deleted object maps", async () => {
  const calls = new Calls();
  const registry = new Registry();
  registry.on.reconcile(Widgets, (ctx) => {
    calls.record(ctx);
    ctx.patch.status.children = calls.of(ctx.name).length; // each run leaves its count on the object
  }, {
    watches: [{
      resource: resource.configmaps,
      map: (cm, { cache }) => {
        const to = cm.metadata.labels?.to;
        if (to === "p") cache.list(resource.secrets); // not watched: throws
        return to ? { name: to } : null;
      },
    }],
  });
  await using kit = await operate(registry, undefined, { timeout: 30_000 });
  for (const name of ["p", "w"]) await kit.apply(Widgets, { metadata: { name }, spec: {} });
  for (const name of ["p", "w"]) await kit.until(Widgets, name, (o) => o.status?.children === 1);
  await kit.apply(resource.configmaps, { metadata: { name: "peek", labels: { to: "p" } } });
  expect(String(await kit.logs.until(/secrets/))).toMatch(/does not watch/);
  // The operator keeps running: the next map wakes its object, and so does a deletion.
  await kit.apply(resource.configmaps, { metadata: { name: "plain", labels: { to: "w" } } });
  await kit.until(Widgets, "w", (o) => o.status?.children === 2);
  await kit.delete(resource.configmaps, "plain");
  await kit.until(Widgets, "w", (o) => o.status?.children === 3);
  await kit.consistently(Widgets, "p", (o) => o?.status?.children === 1, { for: 500 });
  expect(calls.of("p").length).toBe(1);
}, 90_000);

const observed = { observedGeneration: Type.Optional(Type.Integer()) };
const Databases = defineResource({
  group: "blackbox.kobun.dev", kind: "Database", plural: "databases",
  schema: {
    spec: Type.Object({ size: Type.Integer({ minimum: 1 }) }),
    status: Type.Object({ conditions: Type.Optional(conditions.schema), ...observed }),
  },
});
type DatabaseContext = ReconcileContext<TargetObject<typeof Databases>>;
type DatabaseConditions = NonNullable<DatabaseContext["patch"]["status"]["conditions"]>;
const typed: DatabaseConditions = [{ type: "Ready", status: "Unknown", reason: "R", observedGeneration: 1 }];
// @ts-expect-error a condition's status is "True", "False" or "Unknown"
const mistyped: DatabaseConditions = [{ type: "Ready", status: "Maybe" }];

test("conditions.schema: each field conditions.set writes survives; the CRD's status is an enum", async () => {
  expect([typed.length, mistyped.length]).toEqual([1, 1]);
  const seen: unknown[] = [];
  const registry = new Registry();
  registry.on.reconcile(Databases, (ctx) => {
    const message = `size ${ctx.spec.size}`;
    conditions.set(ctx.patch, { type: "Ready", status: false, reason: "Provisioning", message }, { object: ctx.body });
    seen.push(ctx.patch.status.conditions?.[0]?.status); // ctx.patch.status.conditions, typed
  });
  await using kit = await operate(registry, undefined, { timeout: 30_000 });
  await kit.apply(Databases, { metadata: { name: "db" }, spec: { size: 2 } });
  const db = await kit.until(Databases, "db", (o) => o.status?.conditions?.length);
  expect(conditions.get(db, "Ready")).toEqual({
    type: "Ready", status: "False", reason: "Provisioning", message: "size 2",
    lastTransitionTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/), observedGeneration: 1,
  });
  expect(seen[0]).toBe("False");
  const enumOf = (crd: any) => crd.spec.versions[0].schema.openAPIV3Schema.properties.status
    .properties.conditions.items.properties.status.enum;
  expect(enumOf(Databases.crd)).toEqual(["True", "False", "Unknown"]);
  const installed = await fetch(`${kit.sandbox.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions/`
    + "databases.blackbox.kobun.dev");
  expect(enumOf(await installed.json())).toEqual(["True", "False", "Unknown"]);
  // The API server holds the status to the enum.
  const refused = await kit.patchStatus(Databases, "db", { conditions: mistyped }).then(() => "accepted", String);
  expect(refused).toMatch(/Unsupported value|422|Invalid/);
}, 90_000);

test("conditions.schema: a list keyed by type, so two managers' server-side applies merge by condition type", async () => {
  const items = (crd: any) => crd.spec.versions[0].schema.openAPIV3Schema.properties.status.properties.conditions;
  const list = items(Databases.crd);
  expect([list["x-kubernetes-list-type"], list["x-kubernetes-list-map-keys"]]).toEqual(["map", ["type"]]);
  expect(list.items.properties.lastTransitionTime.format).toBe("date-time");
  const registry = new Registry();
  registry.on.reconcile(Databases, () => {}); // installs the CRD; writes no condition
  await using kit = await operate(registry, undefined, { timeout: 30_000 });
  await kit.apply(Databases, { metadata: { name: "merged" }, spec: { size: 1 } });
  const at = "2026-01-01T00:00:00Z";
  const applyStatus = async (manager: string, type: string, status: string) => {
    const url = `${kit.sandbox.url}/apis/blackbox.kobun.dev/v1/namespaces/default/databases/merged/status`
      + `?fieldManager=${manager}&force=true`;
    const body = {
      apiVersion: "blackbox.kobun.dev/v1", kind: "Database", metadata: { name: "merged" },
      status: { conditions: [{ type, status, reason: "R", lastTransitionTime: at }] },
    };
    const answer = await fetch(url, {
      method: "PATCH", headers: { "content-type": "application/apply-patch+yaml" }, body: JSON.stringify(body),
    });
    expect(answer.status).toBe(200);
    return (await answer.json()) as { status: { conditions: { type: string; status: string }[] } };
  };
  await applyStatus("one", "Ready", "True");
  const both = await applyStatus("two", "Synced", "False");
  expect(both.status.conditions.map((c) => `${c.type}=${c.status}`).sort()).toEqual(["Ready=True", "Synced=False"]);
  const twice = [{ type: "Ready", status: "True" as const }, { type: "Ready", status: "False" as const }];
  const refused = await kit.patchStatus(Databases, "merged", { conditions: twice }).then(() => "accepted", String);
  expect(refused).toMatch(/Duplicate value/);
}, 90_000);

test("a /status field the answer lacks: warned once per resource and field; not for an open status", async () => {
  const calls = new Calls();
  const closed = (kind: string) => defineResource({
    group: "blackbox.kobun.dev", kind, plural: `${kind.toLowerCase()}s`,
    schema: {
      spec: Type.Object({ size: Type.Integer() }),
      status: Type.Object({ ready: Type.Optional(Type.Boolean()), ...observed }),
    },
  });
  const Gizmos = closed("Gizmo");
  const Gears = closed("Gear");
  const Blobs = defineResource({
    group: "blackbox.kobun.dev", kind: "Blob", plural: "blobs", schema: { spec: Type.Object({ size: Type.Integer() }) },
  });
  const write = (ctx: ReconcileContext<any>) => {
    calls.record(ctx);
    const status = ctx.patch.status as Record<string, unknown>;
    status.ready = true;
    status.extra = (ctx.spec as { size: number }).size; // a new value each generation: sent each time
    conditions.set(ctx.patch, { type: "Ready", status: true }, { object: ctx.body });
  };
  const registry = new Registry();
  for (const token of [Gizmos, Gears, Blobs]) registry.on.reconcile(token, write);
  await using kit = await operate(registry, undefined, { timeout: 30_000 });
  const objects = [[Gizmos, "g1"], [Gizmos, "g2"], [Gears, "e1"], [Blobs, "b1"]] as const;
  // Three generations of each: once the third runs, the second's status write has had its answer.
  for (const size of [1, 2, 3]) {
    for (const [t, name] of objects) await kit.apply(t as typeof Gizmos, { metadata: { name }, spec: { size } });
    await calls.until((c) => objects.every(([, name]) => c.some((x) => x.name === name && x.generation === size)),
      `generation ${size} of each`, 30_000);
  }
  await kit.until(Blobs, "b1", (o) => o.status?.extra === 3); // an open status keeps what was sent
  const warned = (pattern: RegExp) => kit.logs.lines.filter((line) => pattern.test(String(line)));
  expect(warned(/status\.extra/).length).toBe(2);
  expect(warned(/status\.extra/).filter((line) => /gizmos/.test(String(line))).length).toBe(1);
  expect(warned(/status\.extra/).filter((line) => /gears/.test(String(line))).length).toBe(1);
  expect(warned(/status\.conditions was pruned/).length).toBe(2);
  expect(warned(/status\.(ready|observedGeneration)/)).toEqual([]);
  expect(warned(/WARN.*blobs/)).toEqual([]);
}, 90_000);

// docs/reconcile.md "The cache": an object the watch has not brought yet is not woken; its own ADDED runs it.
test("a map's cache shows our own write at once; the object it names runs when the watch brings it", async () => {
  const calls = new Calls();
  const mapped: Mapped = new Map();
  const [created, found] = [Promise.withResolvers<void>(), Promise.withResolvers<void>()];
  const registry = new Registry();
  registry.on.reconcile(Widgets, async (ctx) => {
    calls.record(ctx);
    if (ctx.name !== "maker" || !ctx.cache.get(resource.configmaps, "go")) return;
    await ctx.api.create(widget("made", "", "x"));
    created.resolve();
  }, {
    watches: [{
      resource: resource.configmaps,
      map: (cm, { cache }) => {
        if (cm.metadata.name === "go") return { name: "maker" };
        if (cm.metadata.name !== "find") return null;
        const keys = keysOf(cache.list(Widgets, { labelSelector: "team=x" }));
        mapped.set("find", { keys: show(keys), at: performance.now() });
        found.resolve();
        return keys;
      },
    }],
  });
  await using kit = await operate(registry, undefined, { timeout: 30_000 });
  await kit.apply(Widgets, { metadata: { name: "maker" }, spec: {} });
  await calls.until((c) => c.length >= 1, "maker's first run");
  kit.sandbox.faults.delayWatches(2_000, { plural: "widgets" });
  await kit.apply(resource.configmaps, { metadata: { name: "go" } });
  await created.promise;
  await kit.apply(resource.configmaps, { metadata: { name: "find" } });
  await found.promise;
  expect(mapped.get("find")?.keys).toEqual(["default/made"]);
  await calls.until(() => calls.of("made").length >= 1, "made's first run, once the watch brings it");
  kit.sandbox.faults.delayWatches(0);
  await kit.apply(resource.configmaps, { metadata: { name: "find", labels: { again: "yes" } } });
  await calls.until(() => calls.of("made").length >= 2, "made, woken by the map now that it is known");
}, 90_000);

// docs/children.md "Conditions": kobun says so "for any status field a /status write sent and its answer lacks",
// nested ones and a condition's field a hand-written schema leaves out included.
test("a nested status field, or a condition's, that the answer lacks is warned about", async () => {
  const Things = defineResource({
    group: "blackbox.kobun.dev", kind: "Thing", plural: "things",
    schema: {
      spec: Type.Object({ size: Type.Integer() }),
      status: Type.Object({
        ...observed, info: Type.Optional(Type.Object({ a: Type.String() })),
        conditions: Type.Optional(Type.Array(Type.Object({ type: Type.String(), status: Type.String() }))),
      }),
    },
  });
  const calls = new Calls();
  const registry = new Registry();
  registry.on.reconcile(Things, (ctx) => {
    calls.record(ctx);
    (ctx.patch.status as Record<string, unknown>).info = { a: "kept", b: `pruned ${ctx.spec.size}` };
    conditions.set(ctx.patch, { type: "Ready", status: true, reason: "Pruned" }, { object: ctx.body });
  });
  await using kit = await operate(registry, undefined, { timeout: 30_000 });
  await kit.apply(Things, { metadata: { name: "t" }, spec: { size: 1 } });
  const thing = await kit.until(Things, "t", (o) => o.status?.info?.a === "kept");
  expect([thing.status?.info, thing.status?.conditions]).toEqual([{ a: "kept" }, [{ type: "Ready", status: "True" }]]);
  await kit.apply(Things, { metadata: { name: "t" }, spec: { size: 2 } }); // its run: the first write answered
  await calls.until((c) => c.some((x) => x.generation === 2), "the second generation's run");
  const warned = (pattern: RegExp) => kit.logs.lines.filter((line) => pattern.test(String(line))).length;
  expect({ nested: warned(/status\.info\.b/), condition: warned(/status\.conditions.*reason/) })
    .toEqual({ nested: 1, condition: 1 });
}, 90_000);
