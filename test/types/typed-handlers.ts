// Must typecheck: typed tokens type every handler kind's context; strings stay untyped.
import {
  Registry, resource, type HandlerContext, type HandlerFn, type Index, type KubeObject, type MergePatch, type On,
} from "kobun";
import { assertType, Defined, Examples, type Equal, type KobunExample } from "./example.ts";

const { on } = new Registry();

on.create(Examples, (ctx) => {
  assertType<Equal<typeof ctx.body, KobunExample>>();
  assertType<Equal<typeof ctx.spec, KobunExample["spec"]>>();
  const size: number = ctx.spec.size;
  const greeting: string | undefined = ctx.status.greeting;
  ctx.patch.status.greeting = `hello ${ctx.name} ×${size} (was ${greeting})`;
  ctx.patch.status.count = null; // null deletes, as in a merge patch
  ctx.patch.spec.backup = { keep: 3 }; // nested objects are partial
  ctx.patch.spec.items = ["a"]; // arrays are replaced whole
  ctx.patch.metadata.labels = { stale: null };
  return { message: "ok" };
}, { id: "create_fn", when: (ctx) => ctx.spec.size > 0 });

on.update(Examples, (ctx) => void ctx.patch.status.count);
on.delete(Examples, (ctx) => void ctx.spec.items?.length, { optional: true });
on.resume(Examples, (ctx) => void ctx.status.count);

on.field(Examples, { field: "spec.backup.schedule" }, (ctx) => {
  assertType<Equal<typeof ctx.new, string | undefined>>();
  assertType<Equal<typeof ctx.old, string | undefined>>();
});
on.field(Examples, { field: "spec.size" }, (ctx) => {
  const next: number | undefined = ctx.new;
  return next;
});

on.event(Examples, (ctx) => {
  assertType<Equal<typeof ctx.body, KobunExample>>();
  return ctx.type === "deleted" ? ctx.spec.field : undefined;
}, { when: (ctx) => ctx.spec.size > 1 });

on.validate(Examples, (ctx) => {
  assertType<Equal<typeof ctx.object, KobunExample>>();
  return ctx.oldObject?.spec.size;
});
on.mutate(Examples, (ctx) => {
  ctx.object.spec.size = Math.max(1, ctx.object.spec.size);
});

on.daemon(Examples, async (ctx) => {
  const size: number = ctx.spec.size;
  while (!ctx.signal.aborted && size > 0) await new Promise((resolve) => setTimeout(resolve, 1000));
}, { when: (ctx) => ctx.spec.size > 0 });
on.timer(Examples, (ctx) => {
  ctx.patch.status.count = (ctx.status.count ?? 0) + 1;
}, { interval: 60, when: (ctx) => ctx.status.greeting !== undefined });

// Built-in kinds, typed from @kubernetes/client-node's models (timestamps as strings, as on the wire).
on.create(resource.pods, (ctx) => {
  const image: string | undefined = ctx.spec.containers[0]?.image;
  const started: string | undefined = ctx.status.startTime;
  ctx.patch.metadata.annotations = { seen: started ?? "never" };
  return image;
});
on.event(resource.configmaps, (ctx) => void ctx.body.data?.["key"]);
on.update(resource.deployments, (ctx) => {
  const replicas: number | undefined = ctx.spec.replicas;
  ctx.patch.spec.replicas = (replicas ?? 0) + 1;
});
on.create(resource.secrets, (ctx) => {
  ctx.patch.data = { token: null };
});

// Schema first: the types come from the TypeBox schema of defineResource.
on.create(Defined, (ctx) => {
  assertType<Equal<typeof ctx.spec, { size: number; mode: "full" | "delta"; note?: string }>>();
  ctx.patch.status.phase = ctx.spec.mode === "full" ? "Copying" : null;
});

// The untyped string form keeps working as before: open records everywhere.
on.create("kobunexamples.kobun.dev/v1", (ctx) => {
  assertType<Equal<typeof ctx.body, KubeObject>>();
  ctx.patch.status.anything = ctx.spec.whatever?.deep;
  ctx.patch.someTopLevelField = 1;
  return ctx.old?.spec;
});
on.field("kobunexamples.kobun.dev/v1", { field: "spec.whatever" }, (ctx) => ctx.new?.anything);
const untyped = (ctx: HandlerContext) => ctx.spec.field as string;
on.update({ group: "kobun.dev", version: "v1", plural: "kobunexamples" }, untyped);

// A merge patch of a type, on its own.
const partial: MergePatch<KobunExample["spec"]> = { backup: { keep: null }, field: null };
void partial;

// Filters (issue 33): predicates get the handler's typed context; field/value on every kind; typed index keys.
on.create(Examples, () => undefined, {
  id: "filtered",
  labels: { app: (value, ctx) => value === "web" && ctx.spec.size > 1 },
  field: "spec.backup.schedule", value: (schedule, { spec }) => schedule !== undefined && spec.size > 0,
});
on.update(Examples, (ctx) => void ctx.old, { field: "spec.size", old: 1, new: (n: number) => n > 1 });
on.daemon(Examples, () => undefined, { field: "spec.size", value: (n, { status }) => n > 0 && !status.greeting });
on.index(Examples, ({ namespace = "", name }) => new Map([[[namespace, name], 1]]), { id: "byPlace" });
on.timer(Examples, ({ indexes }) => {
  const byPlace = indexes.byPlace as Index<number, [string, string]>;
  const found: number[] = byPlace.get(["default", "x"]);
  for (const [[namespace, name], values] of byPlace) void [namespace.length, name.length, values.length];
  return found;
}, { interval: 1 });

// A handler written apart from its registration, typed with the exported HandlerFn and On.
const greet: HandlerFn<KobunExample> = (ctx) => ctx.spec.size;
const register: On["create"] = on.create;
register(Examples, greet, { id: "greet" });
