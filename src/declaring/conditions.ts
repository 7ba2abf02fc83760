// Status conditions (metav1.Condition) set into a handler's patch: the helper every operator
// writes by hand. A merge patch replaces arrays whole, so the patch gets the complete list:
// the object's current conditions with this one added or replaced.
// Pure; never reads the clock except for a new transition, and then handler time (`now()`: the test kit's
// virtual clock under `clock: "virtual"` and in `simulate()`, so that every run of a schedule stamps the same).

import type { TArray, TInteger, TLiteral, TObject, TOptional, TString, TUnion } from "typebox";
import type { Condition } from "../kube/index.ts";
import type { KubeObject } from "../kube/index.ts";
import { now } from "./time.ts";

export type { Condition };

/** A condition to set with `conditions.set`: a boolean status becomes "True"/"False". */
export interface ConditionInput {
  /** CamelCase, e.g. "Ready"; a condition of the same type is replaced. */
  type: string;
  status: "True" | "False" | "Unknown" | boolean;
  /** CamelCase, as the API conventions ask (e.g. "ChildrenReady"). */
  reason?: string;
  /** Human-readable detail. */
  message?: string;
}

/** Options of `conditions.set`. */
export interface SetConditionOptions {
  /**
   * The object the patch is for: its conditions are kept, its generation is the default `observedGeneration`.
   * Default, for a handler's or reconcile's `ctx.patch`: the handled object.
   */
  object?: KubeObject;
  /** The `metadata.generation` this condition describes. Default: `object.metadata.generation`. */
  observedGeneration?: number;
  /** The time of a transition (default handler time now, kobun's `now()`); for tests and replays. */
  now?: Date;
}

interface WithStatus {
  status?: Record<string, any>;
}

/**
 * On a handler's `ctx.patch`, not enumerable: what gives the object the patch is for, `set`'s default `object`
 * (so its other conditions, another controller's among them, are kept). Internal: handling/'s newPatch sets it.
 */
export const PATCH_OBJECT: unique symbol = Symbol("kobun.patchObject");

/** conditions.set (its doc is on `conditions`, where docs/api.md shows it). */
function set(patch: WithStatus, input: ConditionInput, options: SetConditionOptions = {}): Condition {
  if (!input?.type || typeof input.type !== "string") {
    throw new Error("conditions.set needs a condition with a type, e.g. { type: \"Ready\", status: \"True\" }");
  }
  const status = input.status === true ? "True" : input.status === false ? "False" : input.status;
  if (status !== "True" && status !== "False" && status !== "Unknown") {
    throw new Error(
      `condition ${input.type}: status must be "True", "False", "Unknown" or a boolean, ` +
        `not ${JSON.stringify(input.status)}`,
    );
  }
  const object = options.object ?? (patch as { [PATCH_OBJECT]?: () => KubeObject | undefined })[PATCH_OBJECT]?.();
  const list = current(patch, object);
  const index = list.findIndex((c) => c.type === input.type);
  const before = index >= 0 ? list[index] : undefined;
  const generation = options.observedGeneration ?? object?.metadata?.generation;
  const condition: Condition = {
    type: input.type,
    status,
    reason: clipped(input.reason ?? status, REASON_MAX),
    message: clipped(input.message ?? "", MESSAGE_MAX),
    lastTransitionTime: before && before.status === status && before.lastTransitionTime
      ? before.lastTransitionTime
      : (options.now ?? now()).toISOString().replace(/\.\d+Z$/, "Z"),
  };
  if (generation !== undefined) condition.observedGeneration = generation;
  if (index >= 0) list[index] = condition;
  else list.push(condition);
  (patch.status ??= {}).conditions = list;
  return condition;
}

/** metav1.Condition's bounds in characters, as `conditions.schema` (and controller-gen's) give them. */
const REASON_MAX = 1024;
const MESSAGE_MAX = 32768;

/**
 * `text` within `max` characters (code points, as the API server counts them), its end cut with "…": a message
 * built from an error's stack must not make the whole status write refused.
 */
function clipped(text: string, max: number): string {
  if (text.length <= max) return text; // UTF-16 units: at least as many as code points
  const points = [...text];
  return points.length <= max ? text : points.slice(0, max - 1).join("") + "…";
}

function get(source: WithStatus | KubeObject, type: string): Condition | undefined {
  const list = (source as WithStatus).status?.conditions;
  return Array.isArray(list) ? (list as Condition[]).find((c) => c.type === type) : undefined;
}

function isTrue(source: WithStatus | KubeObject, type: string): boolean {
  return get(source, type)?.status === "True";
}

/** The list to write: what the patch already holds (an earlier set in this cycle), else a copy of the object's. */
function current(patch: WithStatus, object: KubeObject | undefined): Condition[] {
  const inPatch = patch.status?.conditions;
  if (Array.isArray(inPatch)) return inPatch as Condition[];
  const existing = object?.status?.conditions;
  return Array.isArray(existing) ? (existing as Condition[]).map((c) => ({ ...c })) : [];
}

/** The TypeBox type of `conditions.schema`. */
export type ConditionsSchema = TArray<TObject<{
  type: TString;
  status: TUnion<[TLiteral<"True">, TLiteral<"False">, TLiteral<"Unknown">]>;
  reason: TOptional<TString>;
  message: TOptional<TString>;
  lastTransitionTime: TOptional<TString>;
  observedGeneration: TOptional<TInteger>;
}>>;

let schema: ConditionsSchema | undefined;

/**
 * Made when first read: TypeBox is loaded then (an operator that never reads it, the example's, does not pay
 * for TypeBox's modules at start-up; one that defines resources has loaded it already).
 */
function conditionsSchema(): ConditionsSchema {
  const Type = (require("typebox") as typeof import("typebox")).default;
  // metav1.Condition's markers as controller-gen writes them: a list keyed by `type` (server-side apply
  // merges two writers' conditions by type instead of replacing the list; a second entry of a type is refused).
  return Type.Array(Type.Object({
    type: Type.String({ minLength: 1, maxLength: 316 }),
    status: Type.Union([Type.Literal("True"), Type.Literal("False"), Type.Literal("Unknown")]),
    reason: Type.Optional(Type.String({ maxLength: REASON_MAX })),
    message: Type.Optional(Type.String({ maxLength: MESSAGE_MAX })),
    lastTransitionTime: Type.Optional(Type.String({ format: "date-time" })),
    observedGeneration: Type.Optional(Type.Integer({ minimum: 0, format: "int64" })),
  }), { "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"] });
}

/**
 * Status conditions (metav1.Condition): `set(patch, condition, { object })` into a handler's patch,
 * `get(obj, type)`, `isTrue(obj, type)`, and their `schema` for a `defineResource` status.
 */
export const conditions: {
  /**
   * Sets one condition in `patch.status.conditions`. `lastTransitionTime` is kept while the
   * status stays the same (a new reason or message is not a transition) and set to handler time
   * now (`now()`) when it flips or the condition is new. Returns the condition as written.
   */
  set(patch: { status?: Record<string, any> }, input: ConditionInput, options?: SetConditionOptions): Condition;
  /** The condition of this type: from the patch when it sets conditions, else from the object. */
  get(source: { status?: Record<string, any> } | KubeObject, type: string): Condition | undefined;
  /** Whether the condition of this type is "True". */
  isTrue(source: { status?: Record<string, any> } | KubeObject, type: string): boolean;
  /**
   * The status schema of the conditions `set` writes (metav1.Condition), for a `defineResource` status:
   * `status: Type.Object({ conditions: Type.Optional(conditions.schema) })`. A status schema that does not
   * name `conditions` has the API server prune them from every write (kobun logs a warning once).
   */
  readonly schema: ConditionsSchema;
} = {
  set, get, isTrue,
  get schema(): ConditionsSchema {
    return (schema ??= conditionsSchema());
  },
};
