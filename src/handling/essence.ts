// The "essence" of an object (what its handlers react to) and diffs between essences.
// The essence is the object minus status, minus metadata other than labels/annotations,
// minus annotations that change without meaning anything (kobun's own bookkeeping,
// kubectl's last-applied copy): it is what is stored as the last-handled configuration.
// Pure functions; must never look at status or at kobun's bookkeeping keys.

import type { KubeObject } from "../kube/index.ts";
import { deepEqual } from "../declaring/index.ts";
import { KOBUN_PREFIX } from "../declaring/index.ts";
import type { Diff, DiffItem } from "../declaring/index.ts";

const NOISY_ANNOTATIONS = new Set([
  "kubectl.kubernetes.io/last-applied-configuration", "deployment.kubernetes.io/revision",
]);

export type Essence = Record<string, any>;

export function isNoisyAnnotation(key: string): boolean {
  return key.startsWith(KOBUN_PREFIX) || NOISY_ANNOTATIONS.has(key);
}

export function essenceOf(body: KubeObject): Essence {
  const out: Essence = {};
  for (const key in body) {
    if (key === "metadata" || key === "status" || key === "apiVersion" || key === "kind") continue;
    if (body[key] !== undefined) out[key] = body[key];
  }
  const meta: Record<string, any> = {};
  const labels = body.metadata?.labels;
  if (labels && Object.keys(labels).length) meta.labels = labels;
  const annotations = body.metadata?.annotations;
  if (annotations) {
    let kept: Record<string, string> | undefined;
    for (const key in annotations) {
      if (isNoisyAnnotation(key)) continue;
      (kept ??= {})[key] = annotations[key]!;
    }
    if (kept) meta.annotations = kept;
  }
  if (meta.labels || meta.annotations) out.metadata = meta;
  return out;
}

/** What the essence will be once `patch` (a merge-patch of the object) is applied. */
export function applyToEssence(essence: Essence, patch: Record<string, any>): Essence {
  const stripped = stripForEssence(patch);
  // A patch of what handlers do not react to (status: the usual `patch.status.x = …`) leaves it as it is.
  if (!hasKeys(stripped)) return essence;
  const patched = mergePatch(essence, stripped) as Essence;
  return essenceOf({ ...patched, metadata: patched.metadata ?? {} } as KubeObject);
}

function stripForEssence(patch: Record<string, any>): Record<string, any> {
  const { status: _s, apiVersion: _a, kind: _k, metadata, ...rest } = patch;
  const meta: Record<string, any> = {};
  if (metadata?.labels) meta.labels = metadata.labels;
  if (metadata?.annotations) meta.annotations = metadata.annotations;
  return Object.keys(meta).length ? { ...rest, metadata: meta } : rest;
}

/** RFC 7386 merge-patch, returning a new value. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  return merge(target, patch, false);
}

/** Two merge-patches as one (`b` wins): nulls are kept, they are deletions to send, not to apply here. */
export function combinePatches(a: Record<string, any>, b: Record<string, any>): Record<string, any> {
  return merge(a, b, true) as Record<string, any>;
}

function merge(target: unknown, patch: unknown, keepNulls: boolean): unknown {
  if (typeof patch !== "object" || patch === null || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> = typeof target === "object" && target !== null && !Array.isArray(target)
    ? { ...(target as object) }
    : {};
  // Keys, not entries: no [key, value] array per key of every patch merged.
  for (const key of Object.keys(patch)) {
    const value = (patch as Record<string, unknown>)[key];
    if (value === null && !keepNulls) delete out[key];
    else if (value !== undefined) out[key] = merge(out[key], value, keepNulls);
  }
  return out;
}

/** The differences from `a` to `b`: objects are compared key by key, everything else as a whole. */
export function diffOf(a: unknown, b: unknown, path: string[] = [], out: DiffItem[] = []): Diff {
  if (deepEqual(a, b)) return out;
  if (isPlain(a) && isPlain(b)) {
    for (const key of Object.keys(a)) {
      if (a[key] === undefined) continue;
      if (b[key] === undefined) out.push({ op: "remove", path: [...path, key], old: a[key], new: undefined });
      else diffOf(a[key], b[key], [...path, key], out);
    }
    for (const key of Object.keys(b)) {
      if (b[key] !== undefined && a[key] === undefined) {
        out.push({ op: "add", path: [...path, key], old: undefined, new: b[key] });
      }
    }
    return out;
  }
  out.push({ op: a === undefined ? "add" : b === undefined ? "remove" : "change", path, old: a, new: b });
  return out;
}

function hasKeys(value: Record<string, any>): boolean {
  for (const _ in value) return true;
  return false;
}

function isPlain(v: unknown): v is Record<string, any> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
