// The watcher as an explicit state machine (after kube-rs's `watcher.rs`), with pure
// transitions and no I/O. `watcher.ts` performs what a state asks for (LIST a page, open
// a WATCH) and feeds the results back through these functions, so every failure mode is
// one visible transition that a unit test can check without a network:
//
//   empty ──LIST page──► listing{continue} ──last page──► listed{rv} ──open──► watching{rv}
//     │                                                      ▲                   │
//     └──streaming list──► initial{rv?} ──end bookmark───────┘◄──stream ended────┘
//   any ──410 Gone──► empty            (fresh LIST without resourceVersion)

import type { KubeObject, ObjectList, RawWatchEvent, Status } from "../kube/index.ts";
import { parseWithoutManagedFields } from "../kube/index.ts";
import { parserComplaint } from "../util/index.ts";

export type WatchState =
  /** Nothing known: the next step is a fresh LIST (or a streaming list). */
  | { kind: "empty" }
  /** A paged LIST in progress: the next step fetches the page behind `continueToken`. */
  | { kind: "listing"; continueToken: string }
  /** A streaming list (sendInitialEvents) in progress; `received` counts its events so far. */
  | { kind: "initial"; received: number; resourceVersion?: string }
  /** The state is complete at `resourceVersion`: the next step opens a WATCH from it. */
  | { kind: "listed"; resourceVersion: string }
  /** A WATCH stream is open; `resourceVersion` is the last one seen on it. */
  | { kind: "watching"; resourceVersion: string };

export const empty: WatchState = { kind: "empty" };

/** The annotation on the BOOKMARK that ends the initial events of a streaming list. */
export const INITIAL_EVENTS_END = "k8s.io/initial-events-end";

/** What one line of a watch stream means to the watcher. */
export type Outcome =
  | { kind: "apply"; type: "added" | "modified" | "deleted"; object: KubeObject }
  /** An object of a streaming list's initial state (reported as `listed`). */
  | { kind: "initial"; object: KubeObject }
  /** The streaming list is complete: the relist ends here. */
  | { kind: "initial-done"; resourceVersion: string }
  | { kind: "bookmark" }
  | { kind: "gone"; status: Status }
  | { kind: "error"; status: Status }
  /** The server does not do streaming lists (it rejected or ignored sendInitialEvents). */
  | { kind: "no-streaming-list"; why: string; status?: Status }
  | { kind: "unknown"; type: string }
  | { kind: "malformed"; why: string };

export interface Step {
  state: WatchState;
  outcome: Outcome;
}

export function resourceVersionOf(state: WatchState): string | undefined {
  if (state.kind === "listed" || state.kind === "watching" || state.kind === "initial") return state.resourceVersion;
  return undefined;
}

/** A LIST page arrived (in `empty` or `listing`). */
export function pageReceived(page: ObjectList): WatchState {
  const next = page.metadata?.continue;
  if (next) return { kind: "listing", continueToken: next };
  return { kind: "listed", resourceVersion: page.metadata?.resourceVersion ?? "" };
}

/** A WATCH stream was opened from `listed`. */
export function watchOpened(state: WatchState): WatchState {
  return state.kind === "listed" ? { kind: "watching", resourceVersion: state.resourceVersion } : state;
}

/** A streaming list was requested from `empty`. */
export function initialStarted(): WatchState {
  return { kind: "initial", received: 0 };
}

/**
 * The stream ended or broke without a 410: re-watch from the last resourceVersion.
 * An unfinished streaming list cannot resume, so it starts over from `empty`.
 */
export function streamEnded(state: WatchState): WatchState {
  if (state.kind === "watching") return { kind: "listed", resourceVersion: state.resourceVersion };
  if (state.kind === "initial") return empty;
  return state;
}

/** 410 Gone, wherever it came from: everything is forgotten but the known objects. */
export function gone(): WatchState {
  return empty;
}

/**
 * Parses one NDJSON line into a raw event, or says why it is not one. The reason never
 * quotes the line: it may be a Secret's data.
 */
export function parseLine(line: string): RawWatchEvent | { malformed: string } {
  let value: unknown;
  try {
    value = parseWithoutManagedFields(line, "event");
  } catch (error) {
    return { malformed: `invalid JSON: ${parserComplaint(error)}` };
  }
  if (typeof value !== "object" || value === null) return { malformed: "not a JSON object" };
  const { type, object } = value as { type?: unknown; object?: unknown };
  if (typeof type !== "string") return { malformed: "no event type" };
  if (typeof object !== "object" || object === null) return { malformed: "no event object" };
  return value as RawWatchEvent;
}

const applyTypes: Record<string, "added" | "modified" | "deleted"> = {
  ADDED: "added", MODIFIED: "modified", DELETED: "deleted",
};

/** One event of an open stream (`watching` or `initial`): the next state and what it means. */
export function eventReceived(state: WatchState, event: RawWatchEvent): Step {
  const type = event.type;
  if (type === "ERROR") {
    const status = asStatus(event.object);
    if (state.kind === "initial" && state.received === 0) {
      return { state: empty, outcome: { kind: "no-streaming-list", why: describe(status), status } };
    }
    if (status.code === 410) return { state: gone(), outcome: { kind: "gone", status } };
    return { state, outcome: { kind: "error", status } };
  }
  const object = event.object as KubeObject;
  const rv = object.metadata?.resourceVersion;
  const apply = applyTypes[type];
  if (apply) {
    if (state.kind === "initial") {
      if (apply !== "added") {
        return { state: empty, outcome: { kind: "no-streaming-list", why: `${type} before the initial events ended` } };
      }
      return {
        state: { kind: "initial", received: state.received + 1, resourceVersion: rv ?? state.resourceVersion },
        outcome: { kind: "initial", object },
      };
    }
    return { state: advance(state, rv), outcome: { kind: "apply", type: apply, object } };
  }
  if (type === "BOOKMARK") {
    if (state.kind === "initial") {
      // A server that supports streaming lists sends no other bookmark before this one;
      // a plain bookmark means it ignored sendInitialEvents and is watching "from now".
      if (object.metadata?.annotations?.[INITIAL_EVENTS_END] !== "true" || !rv) {
        const why = "bookmark without the initial-events-end annotation";
        return { state: empty, outcome: { kind: "no-streaming-list", why } };
      }
      return {
        state: { kind: "watching", resourceVersion: rv }, outcome: { kind: "initial-done", resourceVersion: rv },
      };
    }
    return { state: advance(state, rv), outcome: { kind: "bookmark" } };
  }
  return { state, outcome: { kind: "unknown", type } };
}

function advance(state: WatchState, rv: string | undefined): WatchState {
  if (!rv || state.kind !== "watching") return state;
  return { kind: "watching", resourceVersion: rv };
}

function asStatus(object: unknown): Status {
  const o = (object ?? {}) as Partial<Status>;
  return { ...o, kind: "Status" } as Status;
}

export function describe(status: Status): string {
  return `${status.code ?? "?"} ${status.reason ?? "(no reason)"}: ${status.message ?? "(no message)"}`;
}

/** The server-side timeout for one WATCH request: `base` ± 10 % (spreads reconnects of many watchers). */
export function jitteredTimeout(baseSeconds: number, random: number = Math.random()): number {
  return Math.max(1, Math.round(baseSeconds * (0.9 + 0.2 * random)));
}
