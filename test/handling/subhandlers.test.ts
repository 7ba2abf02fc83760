// Sub-handlers (ctx.subhandler): each its own id, record, retries and outcome; the parent settles
// when they all did; a failing one is retried alone, finished ones never run again, also after a
// restart of the operator (progress kept in status.kobun, or in annotations without a status subresource).

import { afterEach, describe, expect, test } from "bun:test";
import { PermanentError, TemporaryError } from "../../src/declaring/errors.ts";
import { Registry } from "../../src/declaring/registry.ts";
import type { HandlerContext } from "../../src/declaring/kinds/handlers.ts";
import { progressKey } from "../../src/handling/progress.ts";
import { startHarness, type Harness } from "./harness.ts";

const EX = "kobunexamples.kobun.dev/v1";
const PLAIN = "kobunplains.kobun.dev/v1";
let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

/** A progress record, wherever it is kept. */
function progressOf(obj: any, id: string): any {
  const inStatus = obj?.status?.kobun?.progress?.[id];
  if (inStatus) return inStatus;
  const text = obj?.metadata?.annotations?.[progressKey(id)];
  return text === undefined ? undefined : JSON.parse(text);
}

/** A parent registering one sub-handler per spec.items entry; `fail(item, retry)` says whether an attempt throws. */
function itemsOperator(resource: string, fail: (item: string, retry: number) => Error | undefined) {
  const registry = new Registry();
  const calls = { parent: 0, items: [] as string[] };
  registry.on.create(resource, (ctx: HandlerContext) => {
    calls.parent++;
    for (const item of ctx.spec.items as string[]) {
      ctx.subhandler(item, ({ retry, patch }) => {
        calls.items.push(`${item}#${retry}`);
        h?.poke();
        const error = fail(item, retry);
        if (error) throw error;
        patch.status[`seen-${item}`] = retry;
        return { item, retry };
      }, { backoff: 0.05 });
    }
    return { items: ctx.spec.items.length };
  }, { id: "create_fn" });
  return { registry, calls };
}

describe("sub-handlers", () => {
  test("one fails twice and is retried alone; the others run exactly once; the parent succeeds after all", async () => {
    const { registry, calls } = itemsOperator(EX, (item, retry) =>
      item === "b" && retry < 2 ? new TemporaryError(`b not yet (${retry})`, { delay: 0.05 }) : undefined);
    h = await startHarness({ registry, settings: { handling: { retries: null } } });
    await h.create("three", { items: ["a", "b", "c"] });
    const obj = await h.until(() => h!.get("three")?.status?.create_fn && h!.get("three"));
    expect(calls.items).toEqual(["a#0", "b#0", "c#0", "b#1", "b#2"]);
    expect(calls.parent).toBe(3); // called again to register them, each time one was due
    expect(obj.status.create_fn).toEqual({ items: 3 });
    expect(obj.status["create_fn/a"]).toEqual({ item: "a", retry: 0 });
    expect(obj.status["create_fn/b"]).toEqual({ item: "b", retry: 2 });
    expect(obj.status["seen-b"]).toBe(2); // their ctx.patch is the cycle's one patch
    for (const id of ["create_fn", "create_fn/a", "create_fn/b", "create_fn/c"]) {
      expect(obj.status.kobun.progress?.[id] ?? null).toBeNull(); // cleaned up with the cause
    }
  });

  test("while one is retrying, the parent's record waits (no retry of its own) and names its sub-handlers", async () => {
    const { registry } = itemsOperator(EX, (item) => (item === "b" ? new TemporaryError("b later", { delay: 60 }) : undefined));
    h = await startHarness({ registry });
    await h.create("wait", { items: ["a", "b"] });
    const parent = await h.until(() => progressOf(h!.get("wait"), "create_fn"));
    expect(parent).toMatchObject({ purpose: "create", retries: 0, subhandlers: ["create_fn/a", "create_fn/b"] });
    expect(parent.success ?? null).toBeNull();
    expect(Date.parse(parent.delayed)).toBe(Date.parse(progressOf(h.get("wait"), "create_fn/b").delayed));
    expect(progressOf(h.get("wait"), "create_fn/a")).toMatchObject({ success: true });
    expect(progressOf(h.get("wait"), "create_fn/b")).toMatchObject({ retries: 1, message: "b later" });
  });

  for (const [where, resource, plain] of [["status.kobun", EX, false], ["annotations", PLAIN, true]] as const) {
    test(`a restart in the middle does not run finished ones again (progress in ${where})`, async () => {
      const { registry, calls } = itemsOperator(resource, (item, retry) =>
        item === "b" && retry === 0 ? new TemporaryError("b again later", { delay: 0.3 }) : undefined);
      h = await startHarness({ registry, plain, settings: { handling: { retries: null } } });
      const kind = plain ? "KobunPlain" : "KobunExample";
      await h.client.create(h.resource, "default", {
        apiVersion: "kobun.dev/v1", kind, metadata: { name: "mid", namespace: "default" }, spec: { items: ["a", "b", "c"] },
      });
      await h.until(() => progressOf(h!.get("mid"), "create_fn/b")?.retries === 1);
      if (plain) expect(h.get("mid").metadata.annotations[progressKey("create_fn/a")]).toContain('"success":true');
      await h.restart(); // a new operator: nothing in memory, only what the object holds
      const obj = await h.until(() => h!.get("mid")?.status?.create_fn && h!.get("mid"));
      expect(calls.items).toEqual(["a#0", "b#0", "c#0", "b#1"]);
      expect(obj.status["create_fn/b"]).toEqual({ item: "b", retry: 1 });
      const left = Object.keys(obj.metadata.annotations ?? {}).filter((k) => k.startsWith("kobun.dev/create_fn"));
      expect(left).toEqual([]);
    });
  }

  test("one failing for good fails the parent once its siblings settled; both failures stay visible", async () => {
    const { registry, calls } = itemsOperator(EX, (item, retry) => {
      if (item === "a") return new PermanentError("a is broken");
      return item === "c" && retry === 0 ? new TemporaryError("c later", { delay: 0.05 }) : undefined;
    });
    h = await startHarness({ registry, settings: { handling: { retries: null } } });
    await h.create("bad", { items: ["a", "b", "c"] });
    const parent = await h.until(() => progressOf(h!.get("bad"), "create_fn")?.final && progressOf(h!.get("bad"), "create_fn"));
    expect(parent).toMatchObject({ failure: true, message: "sub-handler(s) failed: create_fn/a" });
    expect(progressOf(h.get("bad"), "create_fn/a")).toMatchObject({ failure: true, final: true, message: "a is broken" });
    expect(calls.items).toEqual(["a#0", "b#0", "c#0", "c#1"]); // a not retried; c had its retry
    expect(h.get("bad").status.create_fn).toBeUndefined();
  });

  test("sub-handlers nest: ids parent/child/grandchild, each level settled by the one below", async () => {
    const registry = new Registry();
    const ran: string[] = [];
    registry.on.create(EX, (ctx) => {
      ctx.subhandler("x", (x) => {
        x.subhandler("y", ({ retry }) => {
          ran.push(`y#${retry}`);
          if (retry === 0) throw new TemporaryError("y later", { delay: 0.05 });
          return "deep";
        });
        ran.push("x");
      });
    }, { id: "p" });
    h = await startHarness({ registry, settings: { handling: { retries: null } } });
    await h.create("nest", {});
    const obj = await h.until(() => h!.get("nest")?.status?.["p/x/y"] && h!.get("nest"));
    expect(obj.status["p/x/y"]).toBe("deep");
    expect(ran).toEqual(["x", "y#0", "x", "y#1"]);
    expect(obj.status.kobun.progress?.["p/x"] ?? null).toBeNull();
  });

  test("a parent that throws runs no sub-handler of that call; it is retried as any handler", async () => {
    const registry = new Registry();
    const ran: string[] = [];
    registry.on.create(EX, (ctx) => {
      ctx.subhandler("a", () => void ran.push(`a after parent#${ctx.retry}`));
      if (ctx.retry === 0) throw new TemporaryError("parent not ready", { delay: 0.05 });
    }, { id: "p" });
    h = await startHarness({ registry, settings: { handling: { retries: null } } });
    await h.create("throws", {});
    await h.until(() => h!.get("throws")?.status?.kobun?.lastHandledConfiguration);
    expect(ran).toEqual(["a after parent#1"]);
  });

  test("a wrong registration fails the parent for good, saying what is wrong", async () => {
    const registry = new Registry();
    registry.on.create(EX, (ctx) => {
      ctx.subhandler(ctx.spec.first, () => {});
      ctx.subhandler(ctx.spec.second, () => {}, ctx.spec.options);
    }, { id: "p" });
    h = await startHarness({ registry });
    const cases: [string, Record<string, unknown>, string][] = [
      ["twice", { first: "a", second: "a" }, 'ctx.subhandler("a") in handler p: the id is registered twice'],
      ["slash", { first: "a", second: "b/c" }, 'the id must be a non-empty string without "/"'],
      ["option", { first: "a", second: "b", options: { retry: 3 } }, 'unknown option "retry"'],
      ["retries", { first: "a", second: "b", options: { retries: 0 } }, "retries must be a whole number of attempts ≥ 1"],
    ];
    for (const [name, spec] of cases) await h.create(name, spec);
    for (const [name, , message] of cases) {
      const record = await h.until(() => progressOf(h!.get(name), "p")?.final && progressOf(h!.get(name), "p"));
      expect(record.failure).toBe(true);
      expect(record.message).toContain(message);
    }
  });

  test("a sub-handler's timeout is its own: it fails, counted from its first attempt", async () => {
    const registry = new Registry();
    registry.on.create(EX, (ctx) => {
      ctx.subhandler("slow", ({ signal }) => new Promise((resolve) => signal.addEventListener("abort", resolve)), { timeout: 0.05 });
      ctx.subhandler("fast", () => "ok");
    }, { id: "p" });
    h = await startHarness({ registry });
    await h.create("late", {});
    const record = await h.until(() => progressOf(h!.get("late"), "p/slow")?.final && progressOf(h!.get("late"), "p/slow"));
    expect(record.message).toContain("handler p/slow timed out after 0.05s");
    expect(h.get("late").status["p/fast"]).toBe("ok");
    expect(progressOf(h.get("late"), "p").message).toBe("sub-handler(s) failed: p/slow");
  });

  test("in a delete handler: the finalizer is released only once every sub-handler succeeded", async () => {
    const registry = new Registry();
    const ran: string[] = [];
    registry.on.delete(EX, (ctx) => {
      for (const item of ["x", "y"]) {
        ctx.subhandler(item, ({ retry }) => {
          ran.push(`${item}#${retry}`);
          h?.poke();
          if (item === "y" && retry === 0) throw new TemporaryError("y later", { delay: 0.05 });
        });
      }
    }, { id: "d" });
    h = await startHarness({ registry, settings: { handling: { retries: null } } });
    await h.create("going", {});
    await h.until(() => h!.get("going")?.metadata.finalizers?.length);
    await h.client.delete(h.resource, "default", "going");
    await h.until(() => progressOf(h!.get("going"), "d/y")?.retries === 1);
    expect(h.get("going").metadata.finalizers?.length).toBe(1); // held while y retries
    await h.until(() => h!.get("going") === undefined);
    expect(ran).toEqual(["x#0", "y#0", "y#1"]);
  });

  test("in a field handler: sub-handlers see the field's old and new values", async () => {
    const registry = new Registry();
    const seen: unknown[] = [];
    registry.on.update(EX, () => {}, { id: "u" });
    registry.on.field(EX, { field: "spec.size", id: "f" }, (ctx) => {
      ctx.subhandler("each", ({ old, new: now }) => void seen.push([old, now]));
    });
    h = await startHarness({ registry });
    await h.create("sized", { size: 1 });
    await h.until(() => h!.get("sized")?.status?.kobun?.lastHandledConfiguration);
    await h.client.patch(h.resource, "default", "sized", { spec: { size: 2 } });
    await h.until(() => seen.length === 2 || undefined);
    expect(seen).toEqual([[undefined, 1], [1, 2]]);
  });

  test("a parent that throws on a re-run keeps its sub-handlers' records: finished ones still do not run again", async () => {
    const registry = new Registry();
    const ran: string[] = [];
    let calls = 0;
    registry.on.create(PLAIN, (ctx) => {
      calls++;
      if (calls === 2) throw new TemporaryError("the parent stumbles once", { delay: 0.05 });
      for (const item of ["a", "b"]) {
        ctx.subhandler(item, ({ retry }) => {
          ran.push(`${item}#${retry}`);
          if (item === "b" && retry === 0) throw new TemporaryError("b later", { delay: 0.05 });
        });
      }
    }, { id: "p" });
    h = await startHarness({ registry, plain: true, settings: { handling: { retries: null } } });
    await h.client.create(h.resource, "default", { apiVersion: "kobun.dev/v1", kind: "KobunPlain", metadata: { name: "stumble", namespace: "default" }, spec: {} });
    const obj = await h.until(() => progressOf(h!.get("stumble"), "p") === undefined && calls >= 3 && h!.get("stumble"));
    expect(calls).toBe(3);
    expect(ran).toEqual(["a#0", "b#0", "b#1"]);
    expect(Object.keys(obj.metadata.annotations).filter((k) => k.startsWith("kobun.dev/p"))).toEqual([]);
  });

  test("the parent's timeout bounds the family: past it, its next call fails it and the rest are abandoned", async () => {
    const registry = new Registry();
    const ran: number[] = [];
    registry.on.create(EX, (ctx) => {
      ctx.subhandler("never", ({ retry }) => {
        ran.push(retry);
        throw new TemporaryError("never ready", { delay: 0.15 });
      });
    }, { id: "p", timeout: 0.1 });
    h = await startHarness({ registry, settings: { handling: { retries: null } } });
    await h.create("bounded", {});
    const record = await h.until(() => progressOf(h!.get("bounded"), "p")?.final && progressOf(h!.get("bounded"), "p"));
    expect(record.message).toContain("handler p timed out after 0.1s");
    expect(ran).toEqual([0]);
    expect(progressOf(h.get("bounded"), "p/never")).toBeUndefined(); // cleaned up with the cause
  });
});
