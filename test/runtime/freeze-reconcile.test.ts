// The freeze guarantees of the Kopf-style handlers (freeze-aborts-handlers, freeze-handling,
// freeze-writes-no-events) held by an on.reconcile too: a freeze aborts the running reconcile's
// signal, nothing of its plan (object, status) nor any Event about it is written afterwards, a
// reconcile that ignores its signal is abandoned after the grace and named, nothing is reconciled
// while frozen (a retry that comes due, a new object), and after the resume it runs again.

import { afterEach, expect, test } from "bun:test";
import { resolveSettings } from "../../src/config/index.ts";
import { PermanentError, Registry, TemporaryError, type ReconcileContext } from "../../src/declaring/index.ts";
import type { KubeObject } from "../../src/kube/index.ts";
import { run } from "../../src/runtime/operator.ts";
import { Toggle } from "../../src/util/toggle.ts";
import { linesAt, testLogger } from "../peering/helpers.ts";
import { WIDGETS, widget, world, type World } from "../reconcile/fixtures.ts";
import { eventually } from "./helpers.ts";

let w: World | undefined;
const operators: { stop: AbortController; running: Promise<unknown> }[] = [];
afterEach(async () => {
  for (const { stop, running } of operators.splice(0)) {
    stop.abort();
    await running;
  }
  await w?.stop();
  w = undefined;
});

/** Runs an operator reconciling widgets with `fn`, frozen and resumed through the returned toggle. */
async function operate(fn: (ctx: ReconcileContext) => unknown) {
  w = await world();
  const registry = new Registry();
  registry.on.reconcile("widgets.test.kobun.dev", fn as (ctx: ReconcileContext) => Promise<void>, { id: "r" });
  const toggle = new Toggle();
  const { logger, lines } = testLogger();
  const stop = new AbortController();
  const running = run({
    signal: stop.signal, client: w.client, registry, logger, toggle,
    settings: resolveSettings({
      fileData: { workers: { batchWindow: 0 }, peering: { freezeGracePeriod: "200ms" } },
      flags: { namespaces: ["default"], standalone: true },
    }),
  });
  operators.push({ stop, running });
  return { toggle, lines, sandbox: w.sandbox, client: w.client, running };
}

function deferred<T = void>(): { promise: Promise<T>; resolve(value: T): void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

const discarded = (lines: string[], name: string) => () =>
  lines.some((l) => l.includes("the cycle's results are not written") && l.includes(`name=${name}`));

for (const ending of ["returns", "throws"] as const) {
  test(`a freeze aborts a running reconcile's signal; what it ${ending} after is not written, nor any Event; it runs again after the resume`, async () => {
    const name = `frozen-${ending}`;
    const started = deferred<number>();
    const calls: { retry: number; frozen: boolean }[] = [];
    let toggle!: Toggle;
    const o = await operate(async (ctx: ReconcileContext) => {
      calls.push({ retry: ctx.retry, frozen: toggle.frozen });
      if (calls.length > 1) {
        ctx.patch.status.phase = "after the resume";
        // Its Event (a permanent failure: posted once) tells itself apart from any about the frozen run.
        throw new PermanentError("the resumed run");
      }
      started.resolve(0);
      // Honours its signal, then ends anyway: with a plan, or with an error that is not an abort.
      await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve, { once: true }));
      ctx.patch.status.phase = "after the freeze";
      ctx.patch.metadata.labels = { written: "after the freeze" };
      if (ending === "throws") throw new Error("stopped by the freeze");
    });
    toggle = o.toggle;
    await o.client.create(WIDGETS, "default", widget(name));
    await started.promise;
    toggle.freeze("test", "another operator took over");
    await eventually(discarded(o.lines, name), "the frozen reconcile to be discarded");
    const writes = () => o.sandbox.stats.log.filter((r) => r.verb === "patch" && r.path.includes(`/widgets/${name}`));
    expect(writes()).toEqual([]);
    toggle.unfreeze("test");
    await eventually(() => calls.length === 2, "the widget to be reconciled again after the resume", 10_000);
    const messages = async () => {
      const list = (await (await fetch(`${o.sandbox.url}/api/v1/namespaces/default/events`)).json()) as { items: any[] };
      return list.items.filter((ev) => ev.involvedObject?.name === name).map((ev) => ev.message as string);
    };
    // Events are posted in order: once the resumed run's is there, one about the frozen run would be before it.
    await eventually(async () => (await messages()).some((m) => m.includes("the resumed run")), "the resumed run's Event", 10_000);
    expect(await messages()).toHaveLength(1);
    const stored = await o.client.get(WIDGETS, "default", name);
    expect(stored.metadata.labels?.written).toBeUndefined();
    expect(stored.status?.phase).toBeUndefined(); // a failed reconcile writes nothing either
    // The frozen run's ending is not counted as a failure of the object: the resumed run is a first try.
    expect(calls).toEqual([{ retry: 0, frozen: false }, { retry: 0, frozen: false }]);
  }, 20_000);
}

test("a reconcile that ignores its signal is abandoned after the grace, named, its plan not written; it runs again after the resume", async () => {
  const started = deferred();
  const ended = deferred();
  let calls = 0;
  const o = await operate(async (ctx: ReconcileContext) => {
    if (++calls > 1) {
      ctx.patch.status.phase = "after the resume";
      return;
    }
    started.resolve();
    await Bun.sleep(1500); // the reconcile's own slow work, deaf to its signal: what is under test
    ctx.patch.status.phase = "by the abandoned reconcile";
    ended.resolve();
  });
  await o.client.create(WIDGETS, "default", widget("deaf"));
  await started.promise;
  o.toggle.freeze("test", "another operator took over");
  const abandonedLine = () => linesAt(o.lines, "WARN").find((l) => l.includes("abandoned a handler"));
  await eventually(() => abandonedLine() !== undefined, "the deaf reconcile to be abandoned", 1200);
  expect(abandonedLine()).toContain("r on default/deaf");
  await ended.promise;
  await eventually(discarded(o.lines, "deaf"), "the abandoned reconcile's end to be discarded");
  expect((await o.client.get(WIDGETS, "default", "deaf")).status?.phase).toBeUndefined();
  o.toggle.unfreeze("test");
  await eventually(async () => (await o.client.get(WIDGETS, "default", "deaf")).status?.phase === "after the resume", "the widget reconciled again after the resume", 10_000);
  expect(calls).toBe(2);
}, 15_000);

test("while frozen nothing is reconciled: neither a retry that comes due nor a new object; both run after the resume", async () => {
  const attempts: { name: string; retry: number; frozen: boolean }[] = [];
  let toggle!: Toggle;
  let wake: (() => void) | undefined;
  const o = await operate((ctx: ReconcileContext) => {
    attempts.push({ name: ctx.name!, retry: ctx.retry, frozen: toggle.frozen });
    wake?.();
    if (ctx.name === "retried" && ctx.retry === 0) throw new TemporaryError("not yet", { delay: 0.3 });
    ctx.patch.status.done = true;
  });
  toggle = o.toggle;
  const nth = (n: number, ms: number) => new Promise<boolean>((resolve) => {
    if (attempts.length >= n) return resolve(true);
    const timer = setTimeout(() => resolve(false), ms);
    wake = () => attempts.length >= n && (clearTimeout(timer), resolve(true));
  });
  await o.client.create(WIDGETS, "default", widget("retried"));
  expect(await nth(1, 5000)).toBe(true);
  // Frozen once the first attempt's retry is planned (a freeze during the attempt would discard it).
  await eventually(() => linesAt(o.lines, "WARN").some((l) => l.includes("Reconcile 'r' failed; retrying")), "the retry to be planned");
  toggle.freeze("test", "another operator took over");
  await o.client.create(WIDGETS, "default", widget("new"));
  // Proving an absence: bounded at 3× the retry delay.
  expect(await nth(2, 900)).toBe(false);
  toggle.unfreeze("test");
  expect(await nth(3, 10_000)).toBe(true);
  const done = (object: KubeObject) => object.status?.done === true;
  for (const name of ["retried", "new"]) {
    await eventually(async () => done(await o.client.get(WIDGETS, "default", name)), `${name} to be reconciled`, 10_000);
  }
  expect(attempts.filter((a) => a.name === "retried")).toEqual([{ name: "retried", retry: 0, frozen: false }, { name: "retried", retry: 1, frozen: false }]);
  expect(attempts.filter((a) => a.name === "new")).toEqual([{ name: "new", retry: 0, frozen: false }]);
}, 20_000);
