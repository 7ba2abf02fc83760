// Bookkeeping kept on the object itself, so that a restarted operator continues where the
// last one stopped: the last-handled configuration (the diff base) and one progress record
// per handler (started, retries, delayed until, success/failure, message).
//
// Two places, one per resource, chosen for the fewest requests:
// - annotations (`kobun.dev/last-handled-configuration`, `kobun.dev/<handler-id>`): the
//   default, and the only choice for resources WITHOUT a status subresource (there, status
//   and annotations travel in one main-object PATCH anyway).
// - `status.kobun` ({ lastHandledConfiguration, progress }): for resources WITH a status
//   subresource. The API server drops every metadata change sent to /status (the CRD status
//   strategy copies the old object and keeps only .status), so annotations + handler
//   results would cost two PATCHes per cycle; keeping the bookkeeping beside the results
//   makes a simple create one PATCH to /status. A status schema that prunes unknown
//   fields would silently drop it: the engine checks the PATCH response and falls back to
//   annotations for the resource (see patching.ts).
// Reading always looks at status.kobun first, then the annotations.
// Must never interpret the records (cycle.ts does) or send anything.

import type { KubeObject } from "../kube/index.ts";
import { BASE_ANNOTATION, KOBUN_PREFIX, progressAnnotation, STATUS_KEY } from "../declaring/index.ts";
import type { Cause } from "../declaring/index.ts";
import type { Essence } from "./essence.ts";

export interface ProgressRecord {
  purpose: Cause;
  /** ISO time of the first attempt. */
  started: string;
  /** Failed attempts so far. */
  retries: number;
  /** ISO time before which the handler must not run again. */
  delayed?: string;
  success?: boolean;
  failure?: boolean;
  message?: string;
  /** Kept after its cause completed only to show a failure; ignored when deciding what to run. */
  final?: boolean;
  /**
   * The full ids of the sub-handlers it registered so far in this cause (subhandlers.ts): their
   * records are found through it when kept in annotations, whose keys do not say which ids they hold.
   */
  subhandlers?: string[];
}

export type StorageMode = "annotations" | "status";

export interface Bookkeeping {
  /** The stored diff base: a (redacted) essence, or one digest of it (see diffbase.ts). */
  base: Essence | string | undefined;
  progress: Map<string, ProgressRecord>;
  /** Where it was read from (so a cycle can clean up the same place). */
  from: StorageMode | undefined;
}

/** Changes to write: a new base (its JSON, as diffbase.ts made it), and records to set (or null to delete). */
export interface BookkeepingChange {
  base?: string;
  progress: Map<string, ProgressRecord | null>;
}

const keyCache = new Map<string, string>();

/** The annotation key of a handler's progress: a valid qualified name (≤ 63 chars after the prefix). */
export function progressKey(id: string): string {
  let key = keyCache.get(id);
  if (key) return key;
  key = progressAnnotation(id);
  keyCache.set(id, key);
  return key;
}

export function readBookkeeping(body: KubeObject, ids: Iterable<string>): Bookkeeping {
  const progress = new Map<string, ProgressRecord>();
  const kept = body.status?.[STATUS_KEY];
  if (kept && typeof kept === "object" && (typeof kept.lastHandledConfiguration === "string" || kept.progress)) {
    for (const [id, record] of Object.entries(kept.progress ?? {})) {
      if (record && typeof record === "object") progress.set(id, record as ProgressRecord);
    }
    return { base: parse(kept.lastHandledConfiguration), progress, from: "status" };
  }
  const annotations = body.metadata.annotations;
  if (!annotations) return { base: undefined, progress, from: undefined };
  // The handlers' records, and those of the sub-handlers each record names (at any depth).
  const wanted = [...ids];
  for (let i = 0; i < wanted.length; i++) {
    const id = wanted[i]!;
    const text = progress.has(id) ? undefined : annotations[progressKey(id)];
    const record = text === undefined ? undefined : parse(text);
    if (!record || typeof record !== "object") continue;
    progress.set(id, record as ProgressRecord);
    const children: unknown = record.subhandlers;
    if (Array.isArray(children)) for (const child of children) if (typeof child === "string") wanted.push(child);
  }
  const base = parse(annotations[BASE_ANNOTATION]);
  return { base, progress, from: base !== undefined || progress.size ? "annotations" : undefined };
}

function parse(text: unknown): any {
  if (typeof text !== "string") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The change as a main-object merge-patch fragment: `{ metadata: { annotations } }`. */
export function asAnnotations(change: BookkeepingChange): Record<string, any> | undefined {
  const annotations: Record<string, string | null> = {};
  let any = false;
  if (change.base !== undefined) {
    annotations[BASE_ANNOTATION] = change.base;
    any = true;
  }
  for (const [id, record] of change.progress) {
    annotations[progressKey(id)] = record === null ? null : JSON.stringify(record);
    any = true;
  }
  return any ? { metadata: { annotations } } : undefined;
}

/** The change as a status merge-patch fragment: `{ status: { kobun } }` (records replaced whole). */
export function asStatus(change: BookkeepingChange): Record<string, any> | undefined {
  const kept: Record<string, any> = {};
  if (change.base !== undefined) kept.lastHandledConfiguration = change.base;
  if (change.progress.size) {
    const progress: Record<string, any> = {};
    for (const [id, record] of change.progress) progress[id] = record === null ? null : wholeRecord(record);
    kept.progress = progress;
  }
  return Object.keys(kept).length ? { status: { [STATUS_KEY]: kept } } : undefined;
}

/** Every field present (null when unset), so a merge-patch replaces the record instead of merging it. */
function wholeRecord(r: ProgressRecord): Record<string, unknown> {
  return {
    purpose: r.purpose,
    started: r.started,
    retries: r.retries,
    delayed: r.delayed ?? null,
    success: r.success ?? null,
    failure: r.failure ?? null,
    message: r.message ?? null,
    final: r.final ?? null,
    subhandlers: r.subhandlers ?? null,
  };
}

export function hasChange(change: BookkeepingChange): boolean {
  return change.base !== undefined || change.progress.size > 0;
}
