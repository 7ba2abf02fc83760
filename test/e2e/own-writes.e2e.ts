// What kobun writes for an object, and what it takes from a handler's own writes to it, next to
// other writers (issue 30, defects 6 and 7), on each target: an operator runs in-process with
// handlers that stop at gates the test opens, so that another client's change or a deletion
// lands exactly while a handler runs.
//
// - A handler's own write to its object through ctx.api (server-side apply, a JSON patch, a
//   strategic merge patch) goes into the cycle's new last-handled state, but a change another
//   client made meanwhile does not, and kobun's PATCH never sends either again: the other
//   client's change, to another field or to the very field the handler wrote, is kept and
//   handled as an update.
// - Every write kobun makes for an object is fenced by its uid: a PATCH of the object carrying
//   another uid is refused (422, immutable) by both servers; a deletion seen aborts the object's handlers, and nothing
//   of the deleted object lands on a new one made under the same name.
//
//   cd test/e2e && KOBUN_E2E_TARGET=cluster bun test ./own-writes.e2e.ts

import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/index.ts";
import { ApiError } from "../../src/kube/errors.ts";
import { KubeClient } from "../../src/kube/client.ts";
import type { KubeObject, Resource } from "../../src/kube/types.ts";
import type { CyclePlan } from "../../src/handling/cycle.ts";
import { applyPlan, type PatchTarget } from "../../src/reconciling/patching.ts";
import { run } from "../../src/runtime/operator.ts";
import { Logger, memorySink, silentLogger } from "../../src/util/log.ts";
import { createNamespace, eventually, EXAMPLES, getOrUndefined, uniqueName } from "./harness/kube.ts";
import { ROOT } from "./harness/operator.ts";
import { targetSuite } from "./harness/suite.ts";
import { selectedTargets, type Target, type TargetName } from "./harness/target.ts";

const CONFIGMAPS: Resource = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false };

/** A promise the test resolves from outside. */
function gate<T = void>(): { promise: Promise<T>; open(value: T): void } {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => (open = resolve));
  return { promise, open };
}

interface InProcess {
  lines: string[];
  stop(): Promise<void>;
}

/** The operator in this process, standalone, watching `namespace`, with `registry`'s handlers. */
async function operate(target: Target, namespace: string, registry: Registry): Promise<InProcess> {
  const client = await KubeClient.connect({ kubeconfig: target.kubeconfigPath });
  const sink = memorySink("debug");
  const controller = new AbortController();
  const settings = resolveSettings({ flags: { namespaces: [namespace], standalone: true } });
  const running = run({ signal: controller.signal, client, registry, logger: new Logger(sink), settings });
  return {
    lines: sink.lines,
    async stop() {
      controller.abort();
      await running;
      client.close();
    },
  };
}

/** A namespace of its own, a label value that names the test's objects, and a registry for its handlers. */
async function scenarioOf(target: Target, prefix: string): Promise<{ namespace: string; scenario: string; registry: Registry }> {
  return { namespace: await createNamespace(target.client, "e2e-own"), scenario: uniqueName(prefix), registry: new Registry() };
}

/** How each kind of handler write changes the object's `color` (its own change). */
const WRITES = {
  apply: { resource: EXAMPLES, field: "spec" },
  json: { resource: EXAMPLES, field: "spec" },
  // Custom resources take no strategic merge patch: a built-in kind does.
  strategic: { resource: CONFIGMAPS, field: "data" },
} as const;
type WriteKind = keyof typeof WRITES;

describe.each(selectedTargets())("a handler's own writes and other writers against %s", (targetName: TargetName) => {
  const need = targetSuite(targetName, { crds: [join(ROOT, "handlers/kobunexample.crd.yaml")], cleanup: [EXAMPLES] });

  const cases = (Object.keys(WRITES) as WriteKind[]).flatMap((kind) => [[kind, "size"], [kind, "color"]] as [WriteKind, "size" | "color"][]);
  test.each(cases)(
    "a handler's own write through ctx.api (%s) is taken as handled, and another client's change after it (to %s) is kept and handled as an update",
    async (kind, after) => {
      const t = need();
      const { resource, field } = WRITES[kind];
      const value = (n: number) => (field === "data" ? String(n) : n);
      const { namespace, scenario, registry } = await scenarioOf(t, "own");
      const started = gate();
      const changed = gate();
      const written = gate();
      const changedAgain = gate();
      const updates: { path: string; old: unknown; new: unknown }[][] = [];
      const selector = `${resource.group ? `${resource.plural}.${resource.group}` : resource.plural}/${resource.version}`;
      registry.on.create(selector, async ({ api, name }) => {
        started.open();
        await changed.promise; // another client set size 1 → 5 meanwhile
        const apiVersion = resource.group ? `${resource.group}/${resource.version}` : resource.version;
        if (kind === "apply") await api.apply({ apiVersion, kind: resource.kind, metadata: { name, namespace }, [field]: { color: "red" } });
        else if (kind === "json") await api.patch(resource, name, [{ op: "add", path: `/${field}/color`, value: "red" }], { type: "json" });
        else await api.patch(resource, name, { [field]: { color: "red" } }, { type: "strategic" });
        written.open();
        await changedAgain.promise; // and size 5 → 6, or color red → blue, before kobun's own PATCH
      }, { id: "create_fn", labels: { scenario } });
      registry.on.update(selector, ({ diff }) => {
        updates.push(diff.map((d) => ({ path: d.path.join("."), old: d.old, new: d.new })));
      }, { id: "update_fn", labels: { scenario } });
      const op = await operate(t, namespace, registry);
      try {
        const name = uniqueName("sized");
        const apiVersion = resource.group ? `${resource.group}/${resource.version}` : resource.version;
        await t.client.create(resource, namespace, { apiVersion, kind: resource.kind, metadata: { name, labels: { scenario } }, [field]: { size: value(1) } } as KubeObject);
        await started.promise;
        await t.client.patch(resource, namespace, name, { [field]: { size: value(5) } });
        changed.open();
        await written.promise;
        const last = after === "size" ? { path: `${field}.size`, value: value(6) } : { path: `${field}.color`, value: "blue" };
        await t.client.patch(resource, namespace, name, { [field]: { [after]: last.value } });
        changedAgain.open();
        // The other client's change is an update: its handler runs, with the value that client left.
        const seen = await eventually("the update handler to run for the other client's change", () => updates.some((u) => u.some((d) => d.path === last.path && d.new === last.value)), { timeoutMs: 15_000 })
          .catch(async (e) => {
            const object = await getOrUndefined(t.client, resource, namespace, name);
            throw new Error(`${e.message}; the object's ${field}: ${JSON.stringify(object?.[field])}; updates: ${JSON.stringify(updates)}`);
          });
        expect(seen).toBe(true);
        const object = await t.client.get(resource, namespace, name);
        expect(object[field]).toEqual(after === "size" ? { size: value(6), color: "red" } : { size: value(5), color: "blue" });
        // The handler's own change is not an update of its own: color changes only as the other client changed it.
        expect(updates.flat().filter((d) => d.path === `${field}.color`)).toEqual(after === "size" ? [] : [{ path: `${field}.color`, old: "red", new: "blue" }]);
      } finally {
        await op.stop();
      }
    },
    60_000,
  );

  test("the server's answers that fence kobun's writes: another uid in a PATCH of the object is 422 (immutable), ignored on /status, where a stale resourceVersion is 409", async () => {
    const t = need();
    const namespace = await createNamespace(t.client, "e2e-own");
    const name = uniqueName("fenced");
    const created = await t.client.create(EXAMPLES, namespace, { apiVersion: "kobun.dev/v1", kind: "KobunExample", metadata: { name }, spec: { size: 1 } });
    const map = await t.client.create(CONFIGMAPS, namespace, { apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data: { size: "1" } });
    const stale = "00000000-0000-4000-8000-000000000000";
    const refusal = (e: unknown) => {
      if (!(e instanceof ApiError)) throw e;
      const causes = (e.status.details?.causes ?? []) as { field?: string }[];
      return { code: e.code, message: e.status.message, causes: causes.length, fields: [...new Set(causes.map((c) => c.field))] };
    };
    const immutable = (kind: string) => `${kind} "${name}" is invalid: metadata.uid: Invalid value: "${stale}": field is immutable`;
    // The object: refused as a change of an immutable field (a custom resource's cause is listed twice, a built-in's once).
    expect(await t.client.patch(EXAMPLES, namespace, name, { metadata: { uid: stale }, spec: { size: 2 } }).then(() => "written", refusal))
      .toEqual({ code: 422, message: immutable("KobunExample.kobun.dev"), causes: 2, fields: ["metadata.uid"] });
    expect(await t.client.patch(CONFIGMAPS, namespace, name, { metadata: { uid: stale }, data: { size: "2" } }, { type: "strategic" }).then(() => "written", refusal))
      .toEqual({ code: 422, message: immutable("ConfigMap"), causes: 1, fields: ["metadata.uid"] });
    expect((await t.client.get(CONFIGMAPS, namespace, name)).metadata.resourceVersion).toBe(map.metadata.resourceVersion);
    // /status: the uid is not looked at; a stale resourceVersion is what refuses a write there.
    const written = await t.client.patch(EXAMPLES, namespace, name, { metadata: { uid: stale }, status: { done: true } }, { subresource: "status" });
    expect(written.metadata.uid).toBe(created.metadata.uid);
    expect(written.status).toEqual({ done: true });
    expect(written.spec).toEqual({ size: 1 });
    const late = await t.client.patch(EXAMPLES, namespace, name, { metadata: { resourceVersion: created.metadata.resourceVersion }, status: { late: true } }, { subresource: "status" }).then(() => "written", refusal);
    expect(late).toEqual({ code: 409, message: `Operation cannot be fulfilled on kobunexamples.kobun.dev "${name}": the object has been modified; please apply your changes to the latest version and try again`, causes: 0, fields: [] });
    // The right uid is no change at all: the write goes through.
    const right = await t.client.patch(EXAMPLES, namespace, name, { metadata: { uid: created.metadata.uid }, spec: { size: 3 } });
    expect(right.spec).toEqual({ size: 3 });
  }, 30_000);

  test("kobun's writes of a plan made for a deleted object land nothing on the object made again under its name (results alone, and with a spec change)", async () => {
    const t = need();
    const namespace = await createNamespace(t.client, "e2e-own");
    const target: PatchTarget = { client: t.client, resource: EXAMPLES, storage: { mode: "status" }, logger: silentLogger };
    for (const user of [undefined, { spec: { color: "red" } }]) {
      const name = uniqueName("fenced");
      const make = (size: number) => t.client.create(EXAMPLES, namespace, { apiVersion: "kobun.dev/v1", kind: "KobunExample", metadata: { name }, spec: { size } });
      const old = await make(1);
      await t.client.delete(EXAMPLES, namespace, name);
      await eventually("the old object to be gone", async () => (await getOrUndefined(t.client, EXAMPLES, namespace, name)) === undefined);
      const now = await make(2);
      const plan: CyclePlan = {
        cause: "create", user, results: { create_fn: { uid: old.metadata.uid } }, bookkeeping: { progress: new Map(), base: '{"spec":{"size":1}}' },
        finalizer: undefined, finalizerFirst: false, delay: undefined, runs: [], essence: undefined,
      };
      expect(await applyPlan(target, old, plan, AbortSignal.timeout(10_000))).toBe("gone");
      const after = await t.client.get(EXAMPLES, namespace, name);
      expect(after.metadata.resourceVersion).toBe(now.metadata.resourceVersion);
      expect(after.status).toBeUndefined();
    }
  }, 30_000);

  test("an object deleted while its create handler runs and made again under its name gets nothing of the old run, and the run's signal aborts", async () => {
    const t = need();
    const { namespace, scenario, registry } = await scenarioOf(t, "reborn");
    const firstStarted = gate();
    const release = gate();
    const returned = gate();
    const runs: { uid: string; size: unknown }[] = [];
    const updates: unknown[] = [];
    let firstAborted: boolean | undefined;
    registry.on.create("kobunexamples.kobun.dev/v1", async ({ body, signal }) => {
      const run = { uid: body.metadata.uid!, size: body.spec?.size };
      runs.push(run);
      if (runs.length === 1) {
        firstStarted.open();
        await release.promise; // ignores its signal on purpose: nothing it returns may be written
        firstAborted = signal.aborted;
        returned.open();
      }
      return run;
    }, { id: "create_fn", labels: { scenario } });
    registry.on.update("kobunexamples.kobun.dev/v1", ({ diff }) => void updates.push(diff), { id: "update_fn", labels: { scenario } });
    const op = await operate(t, namespace, registry);
    try {
      const name = uniqueName("reborn");
      const make = (size: number) => t.client.create(EXAMPLES, namespace, { apiVersion: "kobun.dev/v1", kind: "KobunExample", metadata: { name, labels: { scenario } }, spec: { size } });
      const old = await make(1);
      await firstStarted.promise;
      await t.client.delete(EXAMPLES, namespace, name);
      await eventually("the old object to be gone", async () => (await getOrUndefined(t.client, EXAMPLES, namespace, name)) === undefined);
      const reborn = await make(2);
      const mine = { uid: reborn.metadata.uid, size: 2 };
      await eventually("the new object's own create run", async () => (await t.client.get(EXAMPLES, namespace, name)).status?.create_fn?.uid === mine.uid, { timeoutMs: 15_000 });
      release.open();
      await returned.promise;
      // The old run's write would land at once: wait for it, or for the operator saying it dropped it.
      await eventually("the old run's write to land or be dropped", async () => {
        const now = await t.client.get(EXAMPLES, namespace, name);
        return now.status?.create_fn?.uid === old.metadata.uid || op.lines.some((l) => l.includes("nothing written") && l.includes(old.metadata.uid!));
      }, { timeoutMs: 15_000 });
      const now = await t.client.get(EXAMPLES, namespace, name);
      expect(now.status?.create_fn).toEqual(mine);
      expect(updates).toEqual([]);
      expect(firstAborted).toBe(true);
    } finally {
      release.open();
      await op.stop();
    }
  }, 60_000);
});
