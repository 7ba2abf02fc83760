// A port of kube-rs's "configmapgen" controller, written from the docs only (README, docs/reconcile.md,
// docs/children.md, docs/testing.md, docs/api.md), and its tests with kobun/testing.
import { expect, test } from "bun:test";
import { conditions, defineResource, now, Registry, resource, type ObjectKey } from "kobun";
import { startOperator } from "kobun/testing";
import Type from "typebox";

// ---------------------------------------------------------------- the operator
const Condition = Type.Object({
  type: Type.String(), status: Type.String(), reason: Type.Optional(Type.String()),
  message: Type.Optional(Type.String()), lastTransitionTime: Type.Optional(Type.String()),
  observedGeneration: Type.Optional(Type.Integer()),
});
export const Generators = defineResource({
  group: "example.com", kind: "ConfigMapGenerator", plural: "configmapgenerators",
  schema: {
    spec: Type.Object({
      content: Type.String(),
      copies: Type.Integer({ minimum: 1 }),             // the "replicas": how many keys carry the content
      secretRef: Type.Optional(Type.String()),          // a Secret whose data the ConfigMap tracks (by digest)
    }),
    status: Type.Object({
      observedGeneration: Type.Optional(Type.Integer()),
      conditions: Type.Optional(Type.Array(Condition)),
    }),
  },
});

const external = new Map<string, string>();            // the "external system": one record per generator uid
const cleanups = new Map<string, number>();            // finalizer runs, per generator name
const bySecret = new Map<string, Set<string>>();       // secret name → generators referencing it (map's input)
const seenAfterWrite = new Map<string, string | undefined>(); // ctx.cache right after the apply
const calls = new Map<string, { at: number; retry: number }[]>(); // every call, in handler time
const failuresLeft = new Map<string, number>();        // names whose next reconciles throw

const registry = new Registry();
registry.on.reconcile(Generators, async (ctx) => {
  const { name, spec, body } = ctx;
  calls.set(name, [...(calls.get(name) ?? []), { at: now().getTime(), retry: ctx.retry }]);
  if (ctx.deleting) {                                  // finalizer: clean the external record, then release
    cleanups.set(name, (cleanups.get(name) ?? 0) + 1);
    external.delete(body.metadata.uid!);
    return;
  }
  const left = failuresLeft.get(name) ?? 0;
  if (left > 0) {
    failuresLeft.set(name, left - 1);
    throw new Error(`transient failure (${left} left, gen ${body.metadata.generation})`);
  }
  external.set(body.metadata.uid!, `record of ${name}`);
  let digest = "none";
  if (spec.secretRef) {
    bySecret.set(spec.secretRef, new Set([...(bySecret.get(spec.secretRef) ?? []), name]));
    const secret = ctx.cache.get(resource.secrets, spec.secretRef);
    if (!secret) {                                     // waiting on something: say so, and look again later
      conditions.set(ctx.patch, { type: "Ready", status: "False", reason: "SecretMissing",
        message: `secret ${spec.secretRef} not found` }, { object: body });
      return { requeueAfter: 30 };
    }
    digest = Bun.hash(JSON.stringify(secret.data ?? {})).toString(16);
  }
  const data: Record<string, string> = { secretDigest: digest };
  for (let i = 0; i < spec.copies; i++) data[`content-${i}`] = spec.content;
  const cmName = `${name}-generated`;
  await ctx.api.apply(ctx.adopt({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: cmName }, data }));
  seenAfterWrite.set(name, ctx.cache.get(resource.configmaps, cmName)?.data?.["content-0"]);
  conditions.set(ctx.patch, { type: "Ready", status: "True", reason: "ConfigMapApplied" }, { object: body });
}, {
  id: "configmapgen",
  owns: [resource.configmaps],
  watches: [{
    resource: resource.secrets,
    map: (secret): ObjectKey[] => [...(bySecret.get(secret.metadata.name!) ?? [])].map((name) => ({ name })),
  }],
  finalizer: true,
});

// ---------------------------------------------------------------- helpers
const startKit = (clock: "real" | "virtual" = "real") =>
  startOperator({ registry, clock, timeout: 20_000, logLevel: "error" });
const LONG = 90_000;                                   // a loaded 2-core machine

// ---------------------------------------------------------------- tests
test("create: the ConfigMap exists, owned by the generator, and the status is Ready", async () => {
  await using kit = await startKit();
  const gen = await kit.apply(Generators, { metadata: { name: "g1" }, spec: { content: "hello", copies: 2 } });
  const done = await kit.until(Generators, "g1", (o) => conditions.isTrue(o, "Ready"));
  expect(done.status?.observedGeneration).toBe(1);
  expect(conditions.get(done, "Ready")?.reason).toBe("ConfigMapApplied");
  const cm = await kit.until(resource.configmaps, "g1-generated", (c) => c.data?.["content-1"] === "hello");
  const owner = cm.metadata.ownerReferences?.[0];
  expect(owner).toMatchObject({ kind: "ConfigMapGenerator", name: "g1", uid: gen.metadata.uid, controller: true });
  expect(external.get(gen.metadata.uid!)).toBe("record of g1");
}, LONG);

test("a spec change updates the ConfigMap, and observedGeneration follows", async () => {
  await using kit = await startKit();
  await kit.apply(Generators, { metadata: { name: "g2" }, spec: { content: "a", copies: 3 } });
  await kit.until(resource.configmaps, "g2-generated", (c) => c.data?.["content-2"] === "a");
  await kit.apply(Generators, { metadata: { name: "g2" }, spec: { content: "b", copies: 1 } });
  const cm = await kit.until(resource.configmaps, "g2-generated", (c) => c.data?.["content-0"] === "b");
  expect(Object.keys(cm.data ?? {}).sort()).toEqual(["content-0", "secretDigest"]); // apply dropped the others
  const gen = await kit.until(Generators, "g2", (o) => o.status?.observedGeneration === 2);
  expect(gen.metadata.generation).toBe(2);
  expect(conditions.get(gen, "Ready")?.observedGeneration).toBe(2);
}, LONG);

test("a change of the referenced Secret runs the reconcile (watches + map)", async () => {
  await using kit = await startKit();
  await kit.apply(resource.secrets, { metadata: { name: "creds" }, stringData: { token: "one" } });
  await kit.apply(Generators, { metadata: { name: "g3" }, spec: { content: "x", copies: 1, secretRef: "creds" } });
  const first = await kit.until(resource.configmaps, "g3-generated", (c) => c.data?.secretDigest !== undefined);
  const before = first.data?.secretDigest;
  expect(before).not.toBe("none");
  await kit.apply(resource.secrets, { metadata: { name: "creds" }, stringData: { token: "two" } });
  const after = await kit.until(resource.configmaps, "g3-generated", (c) => c.data?.secretDigest !== before);
  expect(after.data?.secretDigest).not.toBe("none");
}, LONG);

test("an owned ConfigMap deleted by hand comes back", async () => {
  await using kit = await startKit();
  await kit.apply(Generators, { metadata: { name: "g4" }, spec: { content: "keep", copies: 1 } });
  const first = await kit.until(resource.configmaps, "g4-generated", (c) => c.data?.["content-0"] === "keep");
  await kit.delete(resource.configmaps, "g4-generated");
  const again = await kit.until(resource.configmaps, "g4-generated", (c) => c.metadata.uid !== first.metadata.uid);
  expect(again.data?.["content-0"]).toBe("keep");
}, LONG);

test("deleting the generator runs the finalizer's cleanup once, then releases it", async () => {
  await using kit = await startKit();
  const gen = await kit.apply(Generators, { metadata: { name: "g5" }, spec: { content: "bye", copies: 1 } });
  const held = await kit.until(Generators, "g5", (o) => conditions.isTrue(o, "Ready"));
  expect(held.metadata.finalizers).toContain("kobun.dev/finalizer");
  expect(external.has(gen.metadata.uid!)).toBe(true);
  await kit.delete(Generators, "g5");
  await kit.gone(Generators, "g5");
  expect(cleanups.get("g5")).toBe(1);
  expect(external.has(gen.metadata.uid!)).toBe(false);
  await kit.gone(resource.configmaps, "g5-generated");  // the garbage collector follows the owner reference
}, LONG);

test("ctx.cache right after the reconcile's own write sees that write (watch delayed 2 s)", async () => {
  await using kit = await startKit();
  await kit.apply(Generators, { metadata: { name: "g6" }, spec: { content: "v1", copies: 1 } });
  await kit.until(Generators, "g6", (o) => conditions.isTrue(o, "Ready"));
  expect(seenAfterWrite.get("g6")).toBe("v1");
  kit.sandbox.faults.delayWatches(2000, { plural: "configmaps" });
  await kit.apply(Generators, { metadata: { name: "g6" }, spec: { content: "v2", copies: 1 } });
  await kit.until(Generators, "g6", (o) => o.status?.observedGeneration === 2);
  expect(seenAfterWrite.get("g6")).toBe("v2");       // the watch has not brought it yet: the overlay did
  kit.sandbox.faults.reset();
}, LONG);

test("a thrown error is retried with backoff: 5 ms, then doubling (virtual time)", async () => {
  await using kit = await startKit("virtual");
  failuresLeft.set("g7", 3);
  await kit.apply(Generators, { metadata: { name: "g7" }, spec: { content: "flaky", copies: 1 } });
  await kit.logs.until(/transient failure \(3 left, gen 1\)/);
  await kit.advance(1);                                // fires 5 ms, 10 ms, 20 ms retries in order
  const gen = await kit.until(Generators, "g7", (o) => conditions.isTrue(o, "Ready"));
  await kit.advance(0.001);                            // waits for the operator to be quiet: no echo wakes it
  const runs = calls.get("g7") ?? [];
  expect(runs.map((c) => c.retry)).toEqual([0, 1, 2, 3]);
  expect(runs.slice(1).map((c, i) => c.at - runs[i]!.at)).toEqual([5, 10, 20]);
  const events = await kit.events(gen, { until: (list) => list.some((e) => e.type === "Warning") });
  expect(events.find((e) => e.type === "Warning")?.message).toContain("transient failure");
  failuresLeft.set("g7", 1);                           // a success reset the backoff: the next one starts at 5 ms
  await kit.apply(Generators, { metadata: { name: "g7" }, spec: { content: "flaky again", copies: 1 } });
  await kit.logs.until(/transient failure \(1 left, gen 2\)/);
  await kit.advance(1);
  await kit.until(Generators, "g7", (o) => o.status?.observedGeneration === 2);
  const more = calls.get("g7")!.slice(4);
  expect(more.map((c) => c.retry)).toEqual([0, 1]);
  expect(more[1]!.at - more[0]!.at).toBe(5);
}, LONG);

test("waiting on a missing Secret requeues after 30 s of virtual time; its creation wakes it", async () => {
  await using kit = await startKit("virtual");
  await kit.apply(Generators, { metadata: { name: "g8" }, spec: { content: "w", copies: 1, secretRef: "later" } });
  const waiting = await kit.until(Generators, "g8", (o) => conditions.get(o, "Ready")?.reason === "SecretMissing");
  expect(conditions.isTrue(waiting, "Ready")).toBe(false);
  const start = calls.get("g8")!.length;
  await kit.advance(29);
  expect(calls.get("g8")!.length).toBe(start);
  await kit.advance(1);
  const list = calls.get("g8")!;
  expect(list.length).toBe(start + 1);
  expect(list.at(-1)!.at - list.at(-2)!.at).toBe(30_000);
  await kit.apply(resource.secrets, { metadata: { name: "later" }, stringData: { token: "now" } });
  await kit.until(Generators, "g8", (o) => conditions.isTrue(o, "Ready"));
  await kit.until(resource.configmaps, "g8-generated", (c) => c.data?.secretDigest !== "none");
  const settled = calls.get("g8")!.length;
  expect(settled).toBeGreaterThan(list.length);        // the Secret's creation ran it (watches)
  await kit.advance(60);                               // the success dropped the pending requeue
  expect(calls.get("g8")!.length).toBe(settled);
}, LONG);
