// The watcher's pure transitions (state.ts), checked without a network: each failure mode
// of a watch stream is one visible transition (after kube-rs's watcher state machine).

import { describe, expect, test } from "bun:test";
import * as S from "../../src/watching/state.ts";
import type { KubeObject, RawWatchEvent } from "../../src/kube/types.ts";

const obj = (name: string, rv: string, uid = `uid-${name}`): KubeObject => ({ metadata: { name, uid, resourceVersion: rv } });
const ev = (type: string, object: object): RawWatchEvent => ({ type, object: object as KubeObject });
const watching: S.WatchState = { kind: "watching", resourceVersion: "10" };

describe("watch state transitions", () => {
  test("a LIST page with a continue token moves to listing; the last page to listed at the list's resourceVersion", () => {
    expect(S.pageReceived({ metadata: { continue: "abc", resourceVersion: "5" }, items: [] })).toEqual({ kind: "listing", continueToken: "abc" });
    expect(S.pageReceived({ metadata: { resourceVersion: "7" }, items: [] })).toEqual({ kind: "listed", resourceVersion: "7" });
  });

  test("opening a watch from listed keeps the resourceVersion", () => {
    expect(S.watchOpened({ kind: "listed", resourceVersion: "7" })).toEqual({ kind: "watching", resourceVersion: "7" });
  });

  test("every object event advances the resourceVersion and is applied", () => {
    for (const [type, kind] of [["ADDED", "added"], ["MODIFIED", "modified"], ["DELETED", "deleted"]] as const) {
      const step = S.eventReceived(watching, ev(type, obj("a", "11")));
      expect(step.state).toEqual({ kind: "watching", resourceVersion: "11" });
      expect(step.outcome).toMatchObject({ kind: "apply", type: kind });
    }
  });

  test("a BOOKMARK advances the resourceVersion and is not an object event", () => {
    const step = S.eventReceived(watching, ev("BOOKMARK", { metadata: { resourceVersion: "15" } }));
    expect(step).toEqual({ state: { kind: "watching", resourceVersion: "15" }, outcome: { kind: "bookmark" } });
  });

  test("seed 002: ERROR 410 goes back to empty (a fresh LIST without resourceVersion)", () => {
    const step = S.eventReceived(watching, ev("ERROR", { kind: "Status", code: 410, reason: "Expired", message: "too old" }));
    expect(step.state).toEqual({ kind: "empty" });
    expect(step.outcome.kind).toBe("gone");
  });

  test("seed 002: any other ERROR is an error outcome carrying the Status", () => {
    const step = S.eventReceived(watching, ev("ERROR", { kind: "Status", code: 500, reason: "InternalError", message: "boom" }));
    expect(step.outcome).toMatchObject({ kind: "error", status: { code: 500, reason: "InternalError", message: "boom" } });
  });

  test("seed 002: an unknown event type changes nothing and is reported by name", () => {
    expect(S.eventReceived(watching, ev("FUTURE", { metadata: {} }))).toEqual({ state: watching, outcome: { kind: "unknown", type: "FUTURE" } });
  });

  test("a stream that ends re-watches from the last resourceVersion; an unfinished streaming list starts over", () => {
    expect(S.streamEnded(watching)).toEqual({ kind: "listed", resourceVersion: "10" });
    expect(S.streamEnded({ kind: "initial", received: 3 })).toEqual({ kind: "empty" });
  });

  test("streaming list: ADDED events are initial objects until the annotated BOOKMARK, which completes the relist", () => {
    let state = S.initialStarted();
    const step1 = S.eventReceived(state, ev("ADDED", obj("a", "3")));
    expect(step1.outcome.kind).toBe("initial");
    state = step1.state;
    const end = S.eventReceived(state, ev("BOOKMARK", { metadata: { resourceVersion: "9", annotations: { [S.INITIAL_EVENTS_END]: "true" } } }));
    expect(end).toEqual({ state: { kind: "watching", resourceVersion: "9" }, outcome: { kind: "initial-done", resourceVersion: "9" } });
  });

  test("streaming list: a plain BOOKMARK, a MODIFIED, or an ERROR before any event means the server does not do streaming lists", () => {
    const initial = S.initialStarted();
    expect(S.eventReceived(initial, ev("BOOKMARK", { metadata: { resourceVersion: "9" } })).outcome.kind).toBe("no-streaming-list");
    expect(S.eventReceived(initial, ev("MODIFIED", obj("a", "3"))).outcome.kind).toBe("no-streaming-list");
    expect(S.eventReceived(initial, ev("ERROR", { kind: "Status", code: 422 })).outcome.kind).toBe("no-streaming-list");
  });

  test("lines that are not events are reported as malformed with a reason", () => {
    expect(S.parseLine("{nope")).toHaveProperty("malformed");
    expect(S.parseLine("42")).toEqual({ malformed: "not a JSON object" });
    expect(S.parseLine('{"object":{}}')).toEqual({ malformed: "no event type" });
    expect(S.parseLine('{"type":"ADDED"}')).toEqual({ malformed: "no event object" });
    expect(S.parseLine('{"type":"ADDED","object":{"metadata":{}}}')).toEqual({ type: "ADDED", object: { metadata: {} } });
  });

  test("the server timeout is jittered within ±10 %", () => {
    expect(S.jitteredTimeout(300, 0)).toBe(270);
    expect(S.jitteredTimeout(300, 1)).toBe(330);
    expect(S.jitteredTimeout(300, 0.5)).toBe(300);
  });
});
