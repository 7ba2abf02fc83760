// A handler's ctx.signal is made only when the handler reads it (issue 15: a cycle whose handler
// never reads it costs no controller), and behaves as a signal of its own either way: it follows
// the cycle's signal, is already aborted when read after an abort, and is unlinked when the call
// ends (listeners the handler left on it never fire, and do not pile up on the shared signal).

import { afterEach, describe, expect, test } from "bun:test";
import type { HandlerSpec } from "../../src/declaring/registry.ts";
import { LOST, whileOwned } from "../../src/reconciling/ownership.ts";
import { runHandler, type HandlingDefaults } from "../../src/handling/runner.ts";
import type { HandlerContext, HandlerFn } from "../../src/declaring/kinds/handlers.ts";

const defaults: HandlingDefaults = { retries: null, backoff: 60, timeout: null };
const spec = (fn: HandlerFn, timeout?: number): HandlerSpec => ({ id: "h", kind: "create", fn, options: timeout === undefined ? {} : { timeout } }) as unknown as HandlerSpec;
const context = (): HandlerContext => ({ started: new Date(), retry: 0, signal: undefined }) as unknown as HandlerContext;

/** Counts the AbortControllers made while it is installed (linkedSignal makes one per signal). */
const Original = globalThis.AbortController;
let made = 0;
class CountedAbortController extends Original {
  constructor() {
    super();
    made++;
  }
}
afterEach(() => {
  globalThis.AbortController = Original;
});
const counting = () => {
  made = 0;
  globalThis.AbortController = CountedAbortController;
};

describe("a handler's signal, lent lazily", () => {
  test("a handler that never reads ctx.signal costs no controller", async () => {
    const cycle = new Original();
    counting();
    const outcome = await runHandler(spec(async () => "done"), context(), defaults, cycle.signal);
    expect(outcome).toEqual({ kind: "success", result: "done" });
    expect(made).toBe(0);
  });

  test("read during the call, it is a signal of its own that aborts with the cycle", async () => {
    const cycle = new Original();
    let seen: AbortSignal | undefined;
    counting();
    const outcome = await runHandler(spec(async (ctx) => {
      seen = ctx.signal;
      expect(ctx.signal).toBe(seen); // one signal per call, however often it is read
      cycle.abort(new Error("freeze"));
      return seen.aborted;
    }), context(), defaults, cycle.signal);
    expect(made).toBe(1);
    expect(seen).not.toBe(cycle.signal);
    expect(outcome).toEqual({ kind: "success", result: true });
    expect(seen!.reason).toEqual(new Error("freeze"));
  });

  test("read after the cycle was aborted, it is aborted already, with the cycle's reason", async () => {
    const cycle = new Original();
    const reason = new Error("shutdown");
    const outcome = await runHandler(spec(async (ctx) => {
      cycle.abort(reason);
      await Promise.resolve();
      return { aborted: ctx.signal.aborted, reason: ctx.signal.reason };
    }), context(), defaults, cycle.signal);
    expect(outcome).toEqual({ kind: "success", result: { aborted: true, reason } });
  });

  test("listeners a handler left on its signal die with its call: the cycle's abort after it never reaches them", async () => {
    const cycle = new Original();
    let heard = 0;
    let kept: HandlerContext | undefined;
    await runHandler(spec(async (ctx) => {
      ctx.signal.addEventListener("abort", () => heard++);
      kept = ctx;
    }), context(), defaults, cycle.signal);
    cycle.abort();
    expect(heard).toBe(0);
    // First read only after the call ended: not linked to the cycle any more either.
    const late = context();
    await runHandler(spec(async () => {}), late, defaults, cycle.signal);
    expect(late.signal.aborted).toBe(true); // the cycle had aborted by then
    expect(kept!.signal.aborted).toBe(false);
  });

  test("with a timeout the handler still gets a signal of its own, aborted at the timeout", async () => {
    const cycle = new Original();
    let seen: AbortSignal | undefined;
    const outcome = await runHandler(spec(async (ctx) => {
      seen = ctx.signal;
      await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve, { once: true }));
    }, 0.05), context(), defaults, cycle.signal);
    expect(outcome.kind).toBe("failure");
    expect(seen!.aborted).toBe(true);
    expect(cycle.signal.aborted).toBe(false);
  });
});

describe("a cycle while the object is ours (reconciling/ownership.ts)", () => {
  test("costs no controller of its own: its cycles share one signal per (shutdown, freeze) pair, which aborts with either", async () => {
    const shutdown = new Original();
    const freeze = new Original();
    const owner = { signal: shutdown.signal, freeze: freeze.signal, graceMs: 1000, onAbandoned() {} };
    const first = await whileOwned(owner, async (signal) => signal);
    counting();
    const signals = new Set<AbortSignal>();
    for (let i = 0; i < 50; i++) signals.add((await whileOwned(owner, async (signal) => signal)) as AbortSignal);
    expect(made).toBe(0);
    expect([...signals]).toEqual([first as AbortSignal]);
    const running = whileOwned(owner, async (signal) => {
      freeze.abort();
      return signal.aborted;
    });
    expect(await running).toBe(LOST); // the freeze took it: nothing of this cycle is written
    expect((first as AbortSignal).aborted).toBe(true);
  });

  test("a cycle that ignores the freeze is abandoned after the grace, and named once", async () => {
    const freeze = new Original();
    let abandoned = 0;
    const outcome = whileOwned({ signal: new Original().signal, freeze: freeze.signal, graceMs: 20, onAbandoned: () => abandoned++ }, () => new Promise<string>(() => {}));
    freeze.abort();
    expect(await outcome).toBe(LOST);
    expect(abandoned).toBe(1);
  });
});
