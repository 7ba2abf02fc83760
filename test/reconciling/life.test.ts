// One object's life without a network: every transition of reconciling/life.ts's table, the
// finalizer table, and resourceVersion ordering, with a fake clock (`now` is a number here).

import { describe, expect, test } from "bun:test";
import type { KubeObject } from "../../src/kube/types.ts";
import { compareResourceVersions } from "../../src/kube/versions.ts";
import { finalizerAction } from "../../src/reconciling/finalizer.ts";
import { admits, backoff, begin, fresh, step, superseded, UNORDERED_ECHO_MS, type Life } from "../../src/reconciling/life.ts";

const obj = (rv: string, spec: Record<string, unknown> = {}): KubeObject => ({ metadata: { name: "a", uid: "u", resourceVersion: rv }, spec }) as KubeObject;
const content = (body: KubeObject) => JSON.stringify(body.spec);
const T = 1_000_000;

/** Begins a cycle of `body` from `life` and expects it to run. */
function started(life: Life | undefined, body: KubeObject, now = T): Life {
  const start = begin(life, body, now, content);
  if (start.kind !== "cycle") throw new Error(`expected a cycle, got ${start.kind}`);
  return start.life;
}

describe("a cycle's outcome moves the phase", () => {
  test("all done after a write: idle, our version remembered, the server's answer is the next item", () => {
    const answer = obj("12");
    const next = step(started(undefined, obj("10")), { kind: "written", body: obj("10"), answer, wrote: true, next: "done" }, T);
    expect(next).toEqual({ life: { phase: { kind: "idle" }, wrote: { rv: "12", at: T } }, body: answer });
  });

  test("nothing to write: idle, no run again, no version remembered", () => {
    expect(step(started(undefined, obj("10")), { kind: "written", body: obj("10"), wrote: false, next: "done" }, T)).toEqual({ life: { phase: { kind: "idle" } } });
  });

  test("the finalizer added first: holding, run again at once with the server's answer", () => {
    const next = step(started(undefined, obj("10")), { kind: "written", body: obj("10"), answer: obj("11"), wrote: true, next: "finalizer-first" }, T);
    expect(next.life?.phase).toEqual({ kind: "holding" });
    expect(next.again).toBe(0);
    expect(next.body?.metadata.resourceVersion).toBe("11");
  });

  test("others changed it between our read and our write: rechecking that body, at once", () => {
    const answer = obj("15", { x: 2 });
    const next = step(started(undefined, obj("10")), { kind: "written", body: obj("10"), answer, wrote: true, next: "changed" }, T);
    expect(next.life?.phase).toEqual({ kind: "rechecking", body: answer });
    expect(next.again).toBe(0);
  });

  test("a handler delayed: waiting, run again after the delay", () => {
    const next = step(started(undefined, obj("10")), { kind: "written", body: obj("10"), wrote: false, next: "delayed", delay: 2500 }, T);
    expect(next.life?.phase).toEqual({ kind: "waiting" });
    expect(next.again).toBe(2500);
  });

  test("failed writes back off 1 s, 2 s, 4 s … up to a minute, and a good write resets the count", () => {
    let life = started(undefined, obj("10"));
    const delays: number[] = [];
    for (let i = 0; i < 8; i++) {
      const next = step(life, { kind: "failed", error: new Error("boom") }, T);
      delays.push(next.again!);
      life = started(next.life, obj("10"));
    }
    expect(delays).toEqual([1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000]);
    expect(life.phase).toEqual({ kind: "handling", failures: 8 });
    const ok = step(life, { kind: "written", body: obj("10"), wrote: false, next: "done" }, T);
    expect(started(ok.life, obj("10")).phase).toEqual({ kind: "handling", failures: 0 });
    expect(backoff(1)).toBe(1000);
  });

  test("refused as too large: no run again, and the same content only reaches on.event handlers", () => {
    const body = obj("10", { big: 1 });
    const refused = step(started(undefined, body), { kind: "refused", content: content(body) }, T);
    expect(refused.again).toBeUndefined();
    expect(begin(refused.life, obj("11", { big: 1 }), T, content)).toEqual({ kind: "events-only", body: obj("11", { big: 1 }) });
    expect(begin(refused.life, obj("12", { big: 2 }), T, content).kind).toBe("cycle");
  });

  test("lost to a freeze: idle and our write forgotten, so the relist's copy of it is handled", () => {
    const life: Life = { phase: { kind: "handling", failures: 0 }, wrote: { rv: "12", at: T } };
    const next = step(life, { kind: "lost" }, T);
    expect(next.life).toEqual({ phase: { kind: "idle" } });
    expect(admits(next.life, false, "12", T)).toBe(true);
  });

  test("gone: forgotten; stopped: idle", () => {
    expect(step(started(undefined, obj("1")), { kind: "gone" }, T).life).toBeUndefined();
    expect(step(started(undefined, obj("1")), { kind: "stopped" }, T).life?.phase).toEqual({ kind: "idle" });
  });
});

describe("which events are worth a cycle", () => {
  const wrote12: Life = { phase: { kind: "idle" }, wrote: { rv: "12", at: T } };

  test("on arrival: our own echo and older versions are dropped, newer ones and deletions are not", () => {
    expect(admits(wrote12, false, "12", T)).toBe(false);
    expect(admits(wrote12, false, "9", T)).toBe(false);
    expect(admits(wrote12, false, "100", T)).toBe(true); // longer is newer, not "1" < "9" as text
    expect(admits(wrote12, true, "9", T)).toBe(true);
    expect(admits(undefined, false, "1", T)).toBe(true);
  });

  test("queued behind a run-again phase, our own version is wanted (it may be our write's answer)", () => {
    const waiting: Life = { ...wrote12, phase: { kind: "waiting" } };
    expect(superseded(waiting, false, "12", T)).toBe(false);
    expect(superseded(waiting, false, "11", T)).toBe(true);
    expect(superseded(wrote12, false, "12", T)).toBe(true);
    expect(superseded({ ...wrote12, phase: { kind: "rechecking", body: obj("13") } }, false, "11", T)).toBe(false);
  });

  test("a cycle begun on a version older than our write is skipped, unless a re-check is due: then with its body", () => {
    expect(begin(wrote12, obj("11"), T, content)).toEqual({ kind: "skip" });
    const newest = obj("14", { x: 1 });
    const start = begin({ ...wrote12, phase: { kind: "rechecking", body: newest } }, obj("11"), T, content);
    expect(start.kind === "cycle" && start.body).toBe(newest);
  });

  test("versions without an order: only an equal one is our echo, and only for a few seconds", () => {
    const life: Life = { phase: { kind: "idle" }, wrote: { rv: "abc", at: T } };
    expect(admits(life, false, "abc", T + 10)).toBe(false);
    expect(admits(life, false, "abc", T + UNORDERED_ECHO_MS)).toBe(true);
    expect(admits(life, false, "abd", T)).toBe(true);
    expect(begin(life, obj("abc"), T, content).kind).toBe("cycle");
  });

  test("a fresh object starts idle and runs", () => {
    expect(fresh()).toEqual({ phase: { kind: "idle" } });
    expect(started(undefined, obj("1")).phase).toEqual({ kind: "handling", failures: 0 });
  });
});

describe("the finalizer table", () => {
  const yes = () => true;
  const no = () => false;
  test.each([
    [false, false, yes, "add"],
    [false, true, no, "release"],
    [false, true, yes, "nothing"],
    [false, false, no, "nothing"],
    [true, true, yes, "run-delete-handlers"],
    [true, true, no, "run-delete-handlers"],
    [true, false, yes, "nothing"],
  ] as const)("deleting=%p has=%p needs=%p → %p", (deleting, has, needs, action) => {
    expect(finalizerAction(deleting, has, needs)).toBe(action);
  });

  test("a deleting object's needs are not asked (the filters may not apply to it)", () => {
    finalizerAction(true, true, () => {
      throw new Error("asked");
    });
  });
});

describe("resourceVersion ordering, in one place", () => {
  test("decimal versions order by value, others have no order", () => {
    expect(compareResourceVersions("9", "10")).toBe(-1);
    expect(compareResourceVersions("10", "10")).toBe(0);
    expect(compareResourceVersions("123456789012345678901", "123456789012345678900")).toBe(1);
    expect(compareResourceVersions("abc", "10")).toBeUndefined();
    expect(compareResourceVersions("", "10")).toBeUndefined();
    expect(compareResourceVersions("010", "10")).toBeUndefined();
  });
});
