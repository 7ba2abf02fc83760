// The RFC 6902 JSON Patch that turns one JSON value into another: what a mutating webhook
// answers after its handler changed the object in place. Objects are diffed key by key;
// arrays that differ are replaced whole (simple, and always correct to apply).

import type { JsonPatchOperation } from "../declaring/index.ts";

/** An RFC 6901 JSON Pointer: `~` is written `~0` and `/` is written `~1` in each key. */
const pointer = (path: readonly string[]) =>
  path.map((key) => `/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`).join("");

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

export function jsonPatchBetween(before: unknown, after: unknown, path: string[] = []): JsonPatchOperation[] {
  if (isObject(before) && isObject(after)) {
    const ops: JsonPatchOperation[] = [];
    for (const key of Object.keys(before)) {
      if (after[key] === undefined && before[key] !== undefined) {
        ops.push({ op: "remove", path: pointer([...path, key]) });
      }
    }
    for (const [key, value] of Object.entries(after)) {
      if (value === undefined) continue;
      if (before[key] === undefined) ops.push({ op: "add", path: pointer([...path, key]), value });
      else ops.push(...jsonPatchBetween(before[key], value, [...path, key]));
    }
    return ops;
  }
  if (Bun.deepEquals(before, after, true)) return [];
  return [{ op: "replace", path: pointer(path), value: after }];
}
