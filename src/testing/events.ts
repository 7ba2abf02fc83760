// `kit.events(object)`: the Events posted about an object (core v1 Events whose involvedObject
// is it), oldest first; with `until`, awaited on a WATCH of them, since the operator posts Events
// in the background, a moment after the handler that caused them.

import type { Event, KubeClient, KubeObject, Resource } from "../kube/index.ts";
import { watchResource } from "../runtime/index.ts";
import type { Logger } from "../util/index.ts";
import { KitStopped } from "./until.ts";

export interface EventsOptions {
  /** Wait (on a watch) until this is true-ish of the object's Events, then resolve with them. */
  until?: (events: Event[]) => unknown;
  /** In ms; default the kit's timeout. */
  timeout?: number;
  /**
   * Where the Events are looked for; default the object's namespace, every namespace for an object with a uid and
   * none (a cluster-scoped one's are in "default"), else the kit's.
   */
  namespace?: string;
}

export interface EventsAbout {
  client: KubeClient;
  events: Resource;
  object: Pick<KubeObject, "kind" | "metadata">;
  /** Where to look (null: every namespace). */
  namespace: string | null;
  until?: (events: Event[]) => unknown;
  timeoutMs: number;
  signal: AbortSignal;
  logger: Logger;
}

/** The object's Events now, or (with `until`) once they pass it. */
export async function eventsAbout(e: EventsAbout): Promise<Event[]> {
  const { namespace } = e;
  const selector = selectorOf(e.object);
  if (!e.until) {
    const list = await e.client.listAll(e.events, { namespace, fieldSelector: selector, signal: e.signal });
    return ordered(list.items as Event[]);
  }
  const timeout = AbortSignal.timeout(e.timeoutMs);
  const signal = AbortSignal.any([e.signal, timeout]);
  const seen = new Map<string, Event>();
  let listed = false;
  let conditionError: unknown;
  const passes = () => {
    try {
      return Boolean(e.until!(ordered([...seen.values()])));
    } catch (error) {
      conditionError = error; // a condition that throws (on no Events yet, say) is "not yet"; shown at the timeout
      return false;
    }
  };
  try {
    const watched = { namespace, fieldSelector: selector };
    for await (const event of watchResource(e.client, e.events, watched, signal, e.logger)) {
      if (event.type === "relist-start") (seen.clear(), (listed = false));
      else if (event.type === "relist-done") listed = true;
      else if (event.type === "deleted") seen.delete(event.object.metadata.name ?? "");
      else seen.set(event.object.metadata.name ?? "", event.object as Event);
      if (listed && passes()) return ordered([...seen.values()]);
    }
  } catch (error) {
    if (!signal.aborted) throw error;
  }
  const reason: unknown = e.signal.reason;
  if (reason instanceof KitStopped) throw new Error(`events(${describeObject(e.object)}): ${reason.message}`);
  if (e.signal.aborted) throw reason;
  const got = ordered([...seen.values()]).map((ev) => `${ev.type} ${ev.reason}: ${ev.message}`);
  const why = conditionError instanceof Error ? conditionError.message : String(conditionError);
  throw new Error(
    `events(${describeObject(e.object)}): ${String(e.until)} not true after ${e.timeoutMs} ms; ` +
      `${got.length} Events in ${namespace ?? "all namespaces"}: ${JSON.stringify(got)}` +
      (conditionError === undefined ? "" : `; the condition last threw: ${why}`),
  );
}

/** Events about an object are found by its uid, or by its name and kind. */
function selectorOf(object: EventsAbout["object"]): string {
  const { uid, name } = object.metadata ?? {};
  if (!uid && !name) throw new Error("events(object): the object needs metadata.uid or metadata.name");
  const fields = uid ? [`involvedObject.uid=${uid}`] : [`involvedObject.name=${name}`];
  if (!uid && object.kind) fields.push(`involvedObject.kind=${object.kind}`);
  return fields.join(",");
}

function describeObject(object: EventsAbout["object"]): string {
  const { name, namespace } = object.metadata ?? {};
  return `${object.kind ?? "object"} ${namespace ? `${namespace}/` : ""}${name}`;
}

/** Oldest first: by the time first seen, then by name (which carries the poster's time and sequence). */
function ordered(events: Event[]): Event[] {
  const when = (ev: Event) => ev.firstTimestamp ?? ev.eventTime ?? ev.metadata.creationTimestamp ?? "";
  const named = (ev: Event) => ev.metadata.name ?? "";
  return events.sort((a, b) => when(a).localeCompare(when(b)) || named(a).localeCompare(named(b)));
}
