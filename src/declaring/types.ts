// The shapes every per-object handler shares, whatever its kind: what it sees of the object
// (ObjectContext), diffs, patches, field paths. No behaviour here. Each kind's own context and
// options are in its file under kinds/.

import type { KubeObject, ObjectMeta, Resource } from "../kube/index.ts";
import type { Logger } from "../util/index.ts";
import type { Api } from "./api.ts";
import type { AdoptOptions } from "./children.ts";
import type { Index } from "./indexes.ts";
import type { MetadataOnlyMark } from "./resource.ts";
import type { EventRecorder } from "./event-types.ts";

/** One difference between the last handled state and now; `path` is relative to the object (or to the field). */
export interface DiffItem {
  op: "add" | "change" | "remove";
  path: string[];
  old: unknown;
  new: unknown;
  /**
   * Set when the values are not known (both are undefined): "sensitive" for a field whose last
   * handled value was stored only as a digest (a Secret's data, a handler's `sensitive` field);
   * "too-large" for the one item (path []) of a diff whose base was too large to store.
   */
  unknown?: "sensitive" | "too-large";
}
/** What changed between the last handled state and now, one item per changed field (Kopf's diff). */
export type Diff = readonly DiffItem[];

/**
 * A JSON merge patch of T: every field optional, `null` deletes it, arrays are replaced whole
 * (RFC 7386). On untyped objects (any), any.
 */
export type MergePatch<T> = 0 extends 1 & T ? any
  : T extends readonly unknown[] ? T
  : T extends object ? { -readonly [K in keyof T]?: MergePatch<T[K]> | null }
  : T;

/**
 * The spec of an object type (untyped objects: an open record; a type without a spec: an empty one;
 * a metadata-only token's objects: never, as reading their spec throws).
 */
export type SpecOf<T> = T extends { spec?: infer S } ? NonNullable<S>
  : MetadataOnlyMark extends keyof T ? never : Record<string, never>;
/** The status of an object type, every field optional (a type without one: an empty record; metadata-only: never). */
export type StatusOf<T> = T extends { status?: infer S } ? Partial<NonNullable<S>>
  : MetadataOnlyMark extends keyof T ? never : Record<string, never>;
type OwnFields<T> = Omit<T, "apiVersion" | "kind" | "metadata" | "spec" | "status">;

/**
 * Merged into one merge-patch after the handlers of a cycle ran. Typed by the resource's object
 * type when the handler was registered with a typed token (`resource<T>(...)`).
 */
export type Patch<T extends object = KubeObject> = {
  metadata: { labels?: Record<string, string | null>; annotations?: Record<string, string | null>; [key: string]: any };
  spec: MergePatch<SpecOf<T>>;
  status: MergePatch<StatusOf<T>>;
} & MergePatch<OwnFields<T>>;

type Depth = [never, 0, 1, 2, 3, 4];
/**
 * The dotted paths of T's fields ("spec.size", "spec.backup.schedule"), five levels deep at
 * most; on open records (index signatures, any) every string.
 */
export type FieldPath<T, D extends number = 5> = [D] extends [never] ? never
  : 0 extends 1 & T ? string
  : T extends readonly unknown[] ? never
  : T extends object
    ? string extends keyof T ? string
    : { [K in keyof T & string]: K | `${K}.${FieldPath<NonNullable<T[K]>, Depth[D]>}` }[keyof T & string]
  : never;

/** The type of the field at a dotted path of T (unknown where the path leaves the type). */
export type ValueAt<T, P extends string> = 0 extends 1 & T ? any
  : P extends `${infer Head}.${infer Rest}`
    ? (Head extends keyof NonNullable<T> ? ValueAt<NonNullable<T>[Head], Rest> : unknown)
  : P extends keyof NonNullable<T> ? NonNullable<T>[P] : unknown;

/** What every handler sees about the object. */
export interface ObjectContext<T extends object = KubeObject> {
  body: T;
  spec: SpecOf<T>;
  meta: ObjectMeta;
  /** Empty when the object has no status yet. */
  status: StatusOf<T>;
  uid: string;
  name: string;
  namespace: string | undefined;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** Per-object scratch space kept in memory across cycles while the operator runs. */
  memo: Record<string, any>;
  resource: Resource;
  logger: Logger;
  /**
   * Aborted on shutdown, freeze-abort, the object's deletion (its results are then never written), or the handler's
   * timeout.
   */
  signal: AbortSignal;
  /**
   * The API server, with the operator's credentials and this handler's `signal` (see handling/api.ts).
   * Writes to this very object are taken as handled, so they do not come back as an update: the
   * fields a write names go into the stored last-handled state (the write is not sent again), so
   * a change another client made meanwhile is handled as an update like any. Writes to other
   * objects are changes like anyone's.
   */
  api: Api;
  /** Kubernetes Events about any object, batched and rate-limited (`event.info(child, "Created", "...")`). */
  event: EventRecorder;
  /**
   * `adopt(child, { owner: ctx.body, ...options })`: the handled object owns `child` (controller reference,
   * namespace, `generateName: "<name>-"` when nameless, labels unless `labels: false`). Returns the child.
   */
  adopt<C extends KubeObject>(child: C, options?: AdoptOptions): C & { metadata: ObjectMeta };
  /** The operator's indexes by id (`on.index`), of this resource or any other. */
  indexes: Readonly<Record<string, Index>>;
}
