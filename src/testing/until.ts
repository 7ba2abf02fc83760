// Waiting for one object to reach a condition, backed by a WATCH of that object (LIST, then
// WATCH from its resourceVersion, by the operator's own watcher), never by polling. A timeout
// fails with a message that names what was awaited and the last state seen of the object.

import type { KubeClient } from "../kube/index.ts";
import type { KubeObject, Resource } from "../kube/index.ts";
import { watchResource } from "../runtime/index.ts";
import type { Logger } from "../util/index.ts";

export class UntilTimeoutError extends Error {
  override readonly name = "UntilTimeoutError";
  constructor(
    message: string,
    /** The object as last seen (undefined: never seen, or deleted). */
    readonly lastSeen: KubeObject | undefined,
  ) {
    super(message);
  }
}

/** One object, watched: where it is, and what the kit's waits are bounded by. */
export interface Watched {
  client: KubeClient;
  resource: Resource;
  namespace: string | null;
  name: string;
  /** For messages: what was awaited, e.g. the predicate's source. */
  what: string;
  /** Aborted when the kit stops or the operator fails: ends the wait at once with its reason. */
  signal: AbortSignal;
  logger: Logger;
}

export interface Awaited extends Watched {
  /** Called on every state of the object seen; true-ish ends the wait. undefined: the object is absent. */
  test(object: KubeObject | undefined): unknown;
  timeoutMs: number;
}

/**
 * Every state of the object the watch sees, from the first LIST on: the object, or undefined
 * while it is absent (after a LIST that did not hold it, or a deletion). Ends when `signal` aborts.
 */
export async function* statesOf(w: Watched, signal: AbortSignal): AsyncGenerator<KubeObject | undefined> {
  let present = false;
  const only = { namespace: w.namespace, fieldSelector: `metadata.name=${w.name}` };
  for await (const event of watchResource(w.client, w.resource, only, signal, w.logger)) {
    if (event.type === "relist-start") present = false;
    else if (event.type === "relist-done") {
      if (!present) yield undefined;
    } else if (event.object.metadata?.name === w.name) {
      present = event.type !== "deleted";
      yield present ? event.object : undefined;
    }
  }
}

/** Resolves with the object state that passed `test` (undefined when absence passed it). */
export async function awaitObject(a: Awaited): Promise<KubeObject | undefined> {
  const timeout = AbortSignal.timeout(a.timeoutMs);
  const signal = AbortSignal.any([a.signal, timeout]);
  let last: KubeObject | undefined;
  let testError: unknown;
  const passes = (object: KubeObject | undefined): boolean => {
    try {
      return Boolean(a.test(object));
    } catch (error) {
      testError = error; // a predicate that throws on a half-made object is "not yet"; shown at the timeout
      return false;
    }
  };
  try {
    for await (const state of statesOf(a, signal)) {
      last = state;
      if (passes(state)) return state;
    }
  } catch (error) {
    if (!signal.aborted) throw error;
  }
  throwIfStopped(a, "until");
  const seen = last === undefined ? "the object was not there" : `last seen: ${show(last)}`;
  const why = testError instanceof Error ? testError.message : String(testError);
  const thrown = testError === undefined ? "" : `; the condition last threw: ${why}`;
  throw new UntilTimeoutError(`until ${describe(a)}: not true after ${a.timeoutMs} ms; ${seen}${thrown}`, last);
}

/** Why a stopped kit's calls and waits end: each names itself (and what it awaited) in front of it. */
export class KitStopped extends Error {
  constructor() {
    super("the kit was stopped (stop(), or the end of `await using`): start another with startOperator()");
  }
}

/** When the kit stopped or the operator failed: that reason, as the wait's error. */
export function throwIfStopped(w: Watched, verb: string): void {
  if (!w.signal.aborted) return;
  const reason = w.signal.reason;
  if (reason instanceof KitStopped) throw new Error(`${verb} ${describe(w)}: ${reason.message}`);
  throw reason instanceof Error ? reason : new Error(`${verb} ${describe(w)}: stopped (${String(reason)})`);
}

export function describe(w: Watched): string {
  const where = w.namespace ? `${w.namespace}/${w.name}` : w.name;
  return `${w.resource.plural}${w.resource.group ? `.${w.resource.group}` : ""} ${where} ${w.what}`;
}

/** The object for a message: no managedFields, a Secret's values hidden, at most 2 KB. */
export function show(object: KubeObject | undefined): string {
  if (object === undefined) return "(absent)";
  const { managedFields: _managed, ...metadata } = object.metadata ?? {};
  const shown: Record<string, unknown> = { ...object, metadata };
  if (object.kind === "Secret") {
    for (const key of ["data", "stringData"]) if (key in shown) shown[key] = "(hidden)";
  }
  const text = JSON.stringify(shown);
  return text.length > 2048 ? `${text.slice(0, 2048)}… (${text.length} bytes)` : text;
}
