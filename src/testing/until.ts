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

export interface Awaited {
  client: KubeClient;
  resource: Resource;
  namespace: string | null;
  name: string;
  /** Called on every state of the object seen; true-ish ends the wait. undefined: the object is absent. */
  test(object: KubeObject | undefined): unknown;
  /** For the timeout message: what was awaited, e.g. the predicate's source. */
  what: string;
  timeoutMs: number;
  /** Aborted when the kit stops or the operator fails: ends the wait at once with its reason. */
  signal: AbortSignal;
  logger: Logger;
}

/** Resolves with the object state that passed `test` (undefined when absence passed it). */
export async function awaitObject(a: Awaited): Promise<KubeObject | undefined> {
  const timeout = AbortSignal.timeout(a.timeoutMs);
  const signal = AbortSignal.any([a.signal, timeout]);
  let last: KubeObject | undefined;
  let present = false;
  let testError: unknown;
  const passes = (object: KubeObject | undefined): boolean => {
    try {
      return Boolean(a.test(object));
    } catch (error) {
      testError = error; // a predicate that throws on a half-made object is "not yet"; shown at the timeout
      return false;
    }
  };
  const only = { namespace: a.namespace, fieldSelector: `metadata.name=${a.name}` };
  const events = watchResource(a.client, a.resource, only, signal, a.logger);
  try {
    for await (const event of events) {
      if (event.type === "relist-start") present = false;
      else if (event.type === "relist-done") {
        if (present) continue;
        last = undefined;
        if (passes(undefined)) return undefined;
      } else if (event.object.metadata?.name === a.name) {
        present = event.type !== "deleted";
        last = present ? event.object : undefined;
        if (passes(last)) return last;
      }
    }
  } catch (error) {
    if (!signal.aborted) throw error;
  }
  if (a.signal.aborted) {
    const reason = a.signal.reason;
    throw reason instanceof Error ? reason : new Error(`until ${describe(a)}: stopped (${String(reason)})`);
  }
  const seen = last === undefined ? "the object was not there" : `last seen: ${show(last)}`;
  const why = testError instanceof Error ? testError.message : String(testError);
  const thrown = testError === undefined ? "" : `; the condition last threw: ${why}`;
  throw new UntilTimeoutError(`until ${describe(a)}: not true after ${a.timeoutMs} ms; ${seen}${thrown}`, last);
}

function describe(a: Awaited): string {
  const where = a.namespace ? `${a.namespace}/${a.name}` : a.name;
  return `${a.resource.plural}${a.resource.group ? `.${a.resource.group}` : ""} ${where} ${a.what}`;
}

/** The object for a message: no managedFields, a Secret's values hidden, at most 2 KB. */
function show(object: KubeObject): string {
  const { managedFields: _managed, ...metadata } = object.metadata ?? {};
  const shown: Record<string, unknown> = { ...object, metadata };
  if (object.kind === "Secret") {
    for (const key of ["data", "stringData"]) if (key in shown) shown[key] = "(hidden)";
  }
  const text = JSON.stringify(shown);
  return text.length > 2048 ? `${text.slice(0, 2048)}… (${text.length} bytes)` : text;
}
