// Retries, TemporaryError / PermanentError, timeouts, progress surviving a restart,
// deletion while a handler is retrying.

import { afterEach, describe, expect, test } from "bun:test";
import { PermanentError, TemporaryError } from "../../src/declaring/errors.ts";
import { Registry } from "../../src/declaring/registry.ts";
import { FINALIZER } from "../../src/declaring/keys.ts";
import { startHarness, type Harness } from "./harness.ts";

const EX = "kobunexamples.kobun.dev/v1";
let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const progressOf = (obj: any, id: string) => obj?.status?.kobun?.progress?.[id];

describe("retries", () => {
  test("TemporaryError retries after its delay, without another watch event, with retry and started kept", async () => {
    const registry = new Registry();
    const attempts: { retry: number; started: number; at: number }[] = [];
    registry.on.create(EX, ({ retry, started }) => {
      attempts.push({ retry, started: started.getTime(), at: Date.now() });
      h?.poke();
      if (retry < 2) throw new TemporaryError("not yet", { delay: 0.05 });
      return { done: retry };
    }, { id: "c" });
    h = await startHarness({ registry, settings: { handling: { retries: null } } }); // it retries: forever, not left to the default
    await h.create("t", {});
    const obj = await h.until(() => h!.get("t")?.status?.c && h!.get("t"));
    expect(obj.status.c).toEqual({ done: 2 });
    expect(attempts.map((a) => a.retry)).toEqual([0, 1, 2]);
    expect(new Set(attempts.map((a) => a.started)).size).toBe(1);
    expect(attempts[1]!.at - attempts[0]!.at).toBeGreaterThanOrEqual(45);
    expect(obj.status.kobun.progress?.c ?? null).toBeNull(); // cleaned up with the result
  });

  test("PermanentError stops at once; the failure is recorded and posted as a Warning event", async () => {
    const registry = new Registry();
    let calls = 0;
    registry.on.create(EX, () => {
      calls++;
      throw new PermanentError("broken for good");
    }, { id: "c" });
    h = await startHarness({ registry });
    await h.create("p", {});
    const record = await h.until(() => progressOf(h!.get("p"), "c"));
    expect(record).toMatchObject({ failure: true, final: true, message: "broken for good", purpose: "create" });
    await h.processor.settled();
    await h.poster.flush(AbortSignal.timeout(2000));
    const events = h.sandbox.store.objects("", "events", "default");
    expect(events.some((e) => e.type === "Warning" && e.involvedObject.name === "p" && e.message.includes("broken for good"))).toBe(true);
    expect(calls).toBe(1);
  });

  test("a cycle whose PATCH fails is retried with backoff and posted as a Warning event", async () => {
    const registry = new Registry();
    registry.on.create(EX, ({ name }) => ({ message: `hello ${name}` }), { id: "c" });
    h = await startHarness({ registry });
    h.sandbox.faults.failNext(1, 500, { verb: "patch", plural: "kobunexamples" });
    await h.create("w", {});
    const obj = await h.until(() => h!.get("w")?.status?.c && h!.get("w"));
    expect(obj.status.c).toEqual({ message: "hello w" }); // written on the retry
    await h.poster.flush(AbortSignal.timeout(2000));
    const events = h.sandbox.store.objects("", "events", "default");
    expect(events.some((e) => e.type === "Warning" && e.reason === "Error" && e.involvedObject.name === "w" && e.message.includes("Could not write"))).toBe(true);
  });

  test("other errors follow `errors` and `retries`: retried until the attempts are used up", async () => {
    const registry = new Registry();
    let calls = 0;
    registry.on.create(EX, () => {
      calls++;
      throw new Error("flaky");
    }, { id: "c", retries: 3, backoff: 0.01 });
    registry.on.create(EX, () => {
      throw new Error("ignored one");
    }, { id: "i", errors: "ignored" });
    h = await startHarness({ registry });
    await h.create("r", {});
    const record = await h.until(() => progressOf(h!.get("r"), "c")?.failure && progressOf(h!.get("r"), "c"));
    expect(calls).toBe(3);
    expect(record.message).toContain("flaky");
    expect(progressOf(h.get("r"), "i")).toBeUndefined();
  });

  test("a handler past its timeout fails for good; its signal is aborted", async () => {
    const registry = new Registry();
    let aborted = false;
    registry.on.create(EX, ({ signal }) => new Promise((resolve) => {
      signal.addEventListener("abort", () => { aborted = true; resolve(undefined); });
    }), { id: "slow", timeout: 0.05 });
    h = await startHarness({ registry });
    await h.create("s", {});
    const record = await h.until(() => progressOf(h!.get("s"), "slow")?.failure && progressOf(h!.get("s"), "slow"));
    expect(record.message).toContain("timed out");
    expect(aborted).toBe(true);
  });

  test("progress survives a restart of the processor in the middle of retrying", async () => {
    const registry = new Registry();
    const seen: { retry: number; started: number }[] = [];
    registry.on.create(EX, ({ retry, started }) => {
      seen.push({ retry, started: started.getTime() });
      h?.poke();
      if (retry === 0) throw new TemporaryError("again later", { delay: 0.3 });
      return { retry };
    }, { id: "c" });
    h = await startHarness({ registry, settings: { handling: { retries: null } } }); // it retries: forever, not left to the default
    await h.create("x", {});
    await h.until(() => progressOf(h!.get("x"), "c")?.retries === 1);
    await h.restart(); // a new operator: nothing in memory
    const obj = await h.until(() => h!.get("x")?.status?.c && h!.get("x"));
    expect(obj.status.c).toEqual({ retry: 1 });
    expect(seen.map((s) => s.retry)).toEqual([0, 1]);
    expect(seen[1]!.started).toBe(seen[0]!.started);
  });

  test("deleting an object while its create handler retries runs the delete handler and releases it", async () => {
    const registry = new Registry();
    let deletes = 0;
    registry.on.create(EX, () => {
      throw new TemporaryError("waiting for something", { delay: 60 });
    }, { id: "c" });
    registry.on.delete(EX, () => void deletes++, { id: "d" });
    h = await startHarness({ registry, settings: { handling: { retries: null } } }); // it retries: forever, not left to the default
    await h.create("del", {});
    await h.until(() => progressOf(h!.get("del"), "c")?.retries === 1);
    expect(h.get("del").metadata.finalizers).toEqual([FINALIZER]);
    await h.client.delete(h.resource, "default", "del");
    await h.until(() => h!.get("del") === undefined);
    expect(deletes).toBe(1);
  });
});
