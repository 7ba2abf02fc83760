// What a handler's own write to its object changed in the object's essence, as a merge patch the
// cycle puts into its new last-handled state (api.ts), never into its PATCH. Only the paths the
// write names are its own: a change another client made between the cycle's read and this write
// shows in the server's answer too, but it is not the handler's, so it is never taken (the stored
// base would take it as handled, and no update handler would run: issue 30, defect 6). Such a change
// stays an ordinary change: the next cycle sees it and runs the update handlers.
//
// The paths a write names: a merge patch's keys (changedBy), a server-side apply's fields, a JSON
// patch's `path`s (and a move's `from`), a strategic merge patch's keys with its directives. A
// list is one value (merge patches replace lists whole), so a path into a list names the list.
// What a server-side apply removes by leaving out a field it applied before is not named (the
// request does not say it, and another writer's removal looks the same): the next cycle sees it.
// Pure functions.

import type { KubeObject } from "../kube/index.ts";
import { diffOf, essenceOf, type Essence } from "./essence.ts";

/**
 * The essence-changing part of a merge patch of the object (status and system metadata are not part of the
 * essence).
 */
export function changedBy(patch: Record<string, any>): Record<string, any> | undefined {
  const { status: _s, apiVersion: _a, kind: _k, metadata, ...rest } = patch;
  const out: Record<string, any> = { ...rest };
  if (metadata?.labels !== undefined || metadata?.annotations !== undefined) {
    out.metadata = {};
    if (metadata.labels !== undefined) out.metadata.labels = metadata.labels;
    if (metadata.annotations !== undefined) out.metadata.annotations = metadata.annotations;
  }
  return Object.keys(out).length ? out : undefined;
}

/** The paths (keys from the object's root) that a write of `type` with `body` names. */
export function namedBy(type: "apply" | "json" | "strategic", body: unknown): string[][] {
  const out: string[][] = [];
  if (type === "json") {
    for (const op of Array.isArray(body) ? body : []) {
      if (!isPlain(op) || op.op === "test") continue;
      if (typeof op.path === "string") out.push(pointerPath(op.path));
      if (op.op === "move" && typeof op.from === "string") out.push(pointerPath(op.from));
    }
  } else if (isPlain(body)) leavesOf(body, [], type === "strategic", out);
  return out;
}

/**
 * The merge patch of what `after` changed at the `named` paths since `before`, in the essence only; undefined if
 * nothing.
 */
export function ownChange(
  before: KubeObject, after: KubeObject, named: readonly string[][],
): Record<string, any> | undefined {
  const was = comparable(essenceOf(before));
  const now = comparable(essenceOf(after));
  const out: Record<string, any> = {};
  for (const path of named) for (const at of essencePaths(path, was, now)) foldAt(out, at, was, now);
  return Object.keys(out).length ? out : undefined;
}

/** Sets in `out` the differences at `path` (or at the list it goes into) between the two essences. */
function foldAt(out: Record<string, any>, path: string[], was: unknown, now: unknown): void {
  let depth = 0;
  for (; depth < path.length; depth++) {
    if (Array.isArray(now)) break; // into a list: the list is the value
    // The parent is gone from the answer: not the write's doing (it wrote deeper), so not its change.
    if (!isPlain(now)) return;
    now = now[path[depth]!];
    was = isPlain(was) ? was[path[depth]!] : undefined;
  }
  for (const item of diffOf(was, now, path.slice(0, depth))) {
    let at = out;
    for (const key of item.path.slice(0, -1)) at = isPlain(at[key]) ? at[key] : (at[key] = {});
    const last = item.path[item.path.length - 1];
    if (last !== undefined) at[last] = item.op === "remove" ? null : item.new;
  }
}

/** A named path as paths of the essence: none for status or system metadata; the whole essence for the root. */
function essencePaths(path: string[], was: Essence, now: Essence): string[][] {
  if (path.length === 0) {
    return [...new Set([...Object.keys(was), ...Object.keys(now)])].flatMap((key) => essencePaths([key], was, now));
  }
  const [top, second] = path;
  if (top === "status" || top === "apiVersion" || top === "kind") return [];
  if (top !== "metadata") return [path];
  if (second === undefined) return [["metadata", "labels"], ["metadata", "annotations"]];
  return second === "labels" || second === "annotations" ? [path] : [];
}

/** The essence with labels and annotations always present, so that removing the last one is a path like any. */
function comparable(essence: Essence): Essence {
  const meta = essence.metadata ?? {};
  return { ...essence, metadata: { labels: meta.labels ?? {}, annotations: meta.annotations ?? {} } };
}

/**
 * The leaf paths of an applied object or a strategic merge patch (lists and scalars are leaves; empty objects name
 * nothing).
 */
function leavesOf(value: Record<string, any>, path: string[], strategic: boolean, out: string[][]): void {
  for (const key of Object.keys(value)) {
    if (strategic && key.startsWith("$")) {
      // Directives: `$patch: replace|delete` and `$retainKeys` act on the whole map; the list ones on their list.
      const slash = key.indexOf("/");
      if (slash >= 0) out.push([...path, key.slice(slash + 1)]);
      else if (key === "$retainKeys" || (key === "$patch" && value[key] !== "merge")) out.push(path);
      continue;
    }
    const child = value[key];
    if (isPlain(child) && Object.keys(child).length > 0) leavesOf(child, [...path, key], strategic, out);
    else if (!isPlain(child)) out.push([...path, key]);
  }
}

/** A JSON pointer as keys ("" is the root). */
function pointerPath(pointer: string): string[] {
  if (pointer === "") return [];
  return pointer.slice(1).split("/").map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function isPlain(v: unknown): v is Record<string, any> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
