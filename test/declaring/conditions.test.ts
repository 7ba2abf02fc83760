// conditions.set: a pure helper that writes the whole conditions list into a patch, keeping
// lastTransitionTime while the status stays, and recording the generation observed.

import { expect, test } from "bun:test";
import { conditions } from "../../src/declaring/conditions.ts";
import { newPatch } from "../../src/handling/context.ts";
import type { KubeObject } from "../../src/kube/types.ts";

const t0 = new Date("2026-01-01T00:00:00.000Z");
const t1 = new Date("2026-01-02T00:00:00.000Z");

function object(conds: unknown[] = [], generation = 3): KubeObject {
  return { apiVersion: "kobun.dev/v1", kind: "KobunExample", metadata: { name: "x", generation }, status: { conditions: conds } };
}

test("a new condition gets a transition time now and the object's generation", () => {
  const patch = newPatch();
  const written = conditions.set(patch, { type: "Ready", status: "True", reason: "ChildrenReady", message: "all 2 children ready" }, { object: object(), now: t0 });
  expect(written).toEqual({ type: "Ready", status: "True", reason: "ChildrenReady", message: "all 2 children ready", lastTransitionTime: "2026-01-01T00:00:00Z", observedGeneration: 3 });
  expect(patch.status.conditions).toEqual([written]);
});

test("the same status keeps lastTransitionTime even when the reason and message change", () => {
  const before = object([{ type: "Ready", status: "True", reason: "A", message: "a", lastTransitionTime: "2025-12-31T00:00:00Z", observedGeneration: 2 }]);
  const patch = newPatch();
  const written = conditions.set(patch, { type: "Ready", status: true, reason: "B", message: "b" }, { object: before, now: t1 });
  expect(written.lastTransitionTime).toBe("2025-12-31T00:00:00Z");
  expect(written).toMatchObject({ reason: "B", message: "b", observedGeneration: 3 });
});

test("a status flip sets a new lastTransitionTime", () => {
  const before = object([{ type: "Ready", status: "True", reason: "A", lastTransitionTime: "2025-12-31T00:00:00Z" }]);
  const written = conditions.set(newPatch(), { type: "Ready", status: "False", reason: "ChildMissing" }, { object: before, now: t1 });
  expect(written.lastTransitionTime).toBe("2026-01-02T00:00:00Z");
  expect(written.status).toBe("False");
});

test("other conditions of the object are kept in the patch (a merge patch replaces the list whole)", () => {
  const before = object([{ type: "Degraded", status: "False", reason: "Fine", lastTransitionTime: "2025-12-31T00:00:00Z" }]);
  const patch = newPatch();
  conditions.set(patch, { type: "Ready", status: "True", reason: "Up" }, { object: before, now: t0 });
  conditions.set(patch, { type: "Progressing", status: "False", reason: "Done" }, { object: before, now: t0, observedGeneration: 7 });
  expect(patch.status.conditions.map((c: any) => [c.type, c.status, c.observedGeneration])).toEqual([
    ["Degraded", "False", undefined], ["Ready", "True", 3], ["Progressing", "False", 7],
  ]);
  expect(before.status!.conditions).toHaveLength(1); // the object itself is never changed
  expect(conditions.isTrue(patch, "Ready")).toBe(true);
  expect(conditions.get(before, "Degraded")?.reason).toBe("Fine");
});

test("a bad status is refused with a clear error", () => {
  expect(() => conditions.set(newPatch(), { type: "Ready", status: "yes" as never })).toThrow(/status must be "True", "False", "Unknown" or a boolean/);
  expect(() => conditions.set(newPatch(), { status: "True" } as never)).toThrow(/needs a condition with a type/);
});

test("a reason or message over the schema's bounds is cut to them (by code point), so the status write is not refused", () => {
  const patch = newPatch();
  const long = "é".repeat(40_000);
  const written = conditions.set(patch, { type: "Ready", status: false, reason: "R".repeat(2000), message: long },
    { object: object(), now: t0 });
  expect([...written.message!].length).toBe(32768);
  expect(written.message!.endsWith("…")).toBe(true);
  expect(written.reason!.length).toBe(1024);
  const short = conditions.set(newPatch(), { type: "Ready", status: true, message: "fine" }, { object: object(), now: t0 });
  expect(short.message).toBe("fine");
});
