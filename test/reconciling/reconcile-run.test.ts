// One call of an on.reconcile function: what it gets, and what its ending means (done with a
// patch, a requeue it asked for, a retry with controller-runtime's backoff or a TemporaryError's
// delay, a PermanentError not retried, a timeout, a shutdown); which changes make an object
// worth reconciling again.

import { describe, expect, test } from "bun:test";
import { PermanentError, TemporaryError, reconcileSpecOf, type Cache, type ReconcileFn } from "../../src/declaring/index.ts";
import type { KubeObject } from "../../src/kube/index.ts";
import { backoffMs, callReconcile, DEFAULT_RECONCILE_BACKOFF, triggers } from "../../src/reconciling/reconcile/reconcile-run.ts";
import { silentLogger } from "../../src/util/index.ts";

const RESOURCE = { group: "kobun.dev", version: "v1", plural: "things", kind: "Thing", namespaced: true, statusSubresource: true };
const BODY: KubeObject = { metadata: { name: "a", namespace: "ns", uid: "u", generation: 3, resourceVersion: "7" }, spec: { size: 2 } };
const NO_CACHE: Cache = { get: () => undefined, list: () => [] };

function call(fn: ReconcileFn, extra: { retry?: number; signal?: AbortSignal; timeout?: number; deleting?: boolean } = {}) {
  const spec = reconcileSpecOf("things.kobun.dev", fn, extra.timeout ? { timeout: extra.timeout } : {});
  return callReconcile({
    spec, resource: RESOURCE, body: BODY, memo: {}, logger: silentLogger, tools: {}, cache: NO_CACHE,
    deleting: extra.deleting ?? false, retry: extra.retry ?? 0, backoff: DEFAULT_RECONCILE_BACKOFF,
    signal: extra.signal ?? new AbortController().signal,
  });
}

describe("callReconcile", () => {
  test("gets the object, the cache, deleting and its retry count; returns its patch and a requeue", async () => {
    let seen: unknown;
    const verdict = await call((ctx) => {
      seen = { name: ctx.name, size: (ctx.spec as any).size, deleting: ctx.deleting, retry: ctx.retry, cache: ctx.cache };
      ctx.patch.status.ready = true;
      return { requeueAfter: 2.5 };
    }, { retry: 4, deleting: true });
    expect(seen).toEqual({ name: "a", size: 2, deleting: true, retry: 4, cache: NO_CACHE });
    expect(verdict).toMatchObject({ kind: "done", patch: { status: { ready: true } }, requeueMs: 2500 });
  });

  test("nothing returned: done, nothing to write, no requeue", async () => {
    const verdict = await call(async () => {});
    expect(verdict.kind).toBe("done");
    expect(verdict).not.toHaveProperty("requeueMs");
    expect((verdict as { patch: unknown }).patch).toBeUndefined();
  });

  test("an error is retried with the backoff of its place in the row; a TemporaryError after its delay", async () => {
    expect(await call(() => { throw new Error("boom"); }, { retry: 3 })).toMatchObject({ kind: "retry", delayMs: 40 });
    expect(await call(() => { throw new TemporaryError("later", { delay: 1.5 }); })).toMatchObject({ kind: "retry", delayMs: 1500 });
  });

  test("a PermanentError is not retried", async () => {
    expect(await call(() => { throw new PermanentError("never"); })).toMatchObject({ kind: "failed" });
  });

  test("a timeout aborts its signal and is retried as a failure", async () => {
    let aborted: AbortSignal | undefined;
    const verdict = await call((ctx) => {
      aborted = ctx.signal;
      return new Promise(() => {});
    }, { timeout: 0.02 });
    expect(verdict).toMatchObject({ kind: "retry" });
    expect((verdict as { error: Error }).error.message).toMatch(/timed out after 0.02s/);
    expect(aborted?.aborted).toBe(true);
  });

  test("a shutdown while it runs is no verdict", async () => {
    const stop = new AbortController();
    const verdict = call((ctx) => new Promise((_, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason))), { signal: stop.signal });
    stop.abort();
    expect(await verdict).toEqual({ kind: "aborted" });
  });
});

test("the backoff doubles from 5 ms to at most 1,000 s", () => {
  expect([0, 1, 2, 10].map((n) => backoffMs(n, DEFAULT_RECONCILE_BACKOFF))).toEqual([5, 10, 20, 5120]);
  expect(backoffMs(40, DEFAULT_RECONCILE_BACKOFF)).toBe(1_000_000);
  expect(backoffMs(5000, DEFAULT_RECONCILE_BACKOFF)).toBe(1_000_000);
});

test("a status or version change is no trigger under on: generation; labels, generation and deletion are", () => {
  const at = (m: Partial<KubeObject["metadata"]>, status?: unknown) => triggers({ metadata: { ...BODY.metadata, ...m }, status } as KubeObject, "generation");
  const base = at({});
  expect(at({ resourceVersion: "8" }, { ready: true })).toBe(base);
  expect(at({ generation: 4 })).not.toBe(base);
  expect(at({ labels: { a: "b" } })).not.toBe(base);
  expect(at({ finalizers: ["x"] })).not.toBe(base);
  expect(at({ deletionTimestamp: "2026-12-06T00:00:00Z" })).not.toBe(base);
  expect(triggers({ metadata: { ...BODY.metadata, resourceVersion: "8" } }, "any")).not.toBe(triggers(BODY, "any"));
});
