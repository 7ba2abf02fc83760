// An Event as the API server takes it (core v1 `events`): what a queued event keeps of its
// object (the involvedObject), the body of a new Event, what the PATCH of a repeated one
// changes, and the name it is created under. Pure; poster.ts queues, correlates and sends.

import type { KubeObject, Resource } from "../kube/index.ts";

export const EVENTS: Resource = {
  group: "", version: "v1", plural: "events", kind: "Event", namespaced: true, statusSubresource: false,
};
const MAX_MESSAGE = 1024;
/** A DNS subdomain name's limit, which an Event's name must keep. */
const MAX_NAME = 253;

/**
 * What an Event says about its object: its involvedObject. Queued events keep this, not the
 * object: during a burst up to `capacity` of them wait, and a handled body (the server's
 * answer, managedFields and all) held by each was megabytes of the burst's peak (issue 15).
 */
export interface Involved {
  apiVersion: string | undefined;
  kind: string | undefined;
  name: string | undefined;
  namespace: string | undefined;
  uid: string;
  resourceVersion: string | undefined;
}

export function involvedOf(object: KubeObject, uid: string): Involved {
  const { name, namespace, resourceVersion } = object.metadata;
  return { apiVersion: object.apiVersion, kind: object.kind, name, namespace, uid, resourceVersion };
}

/** What a new Event tells: about which object, what happened, when first and last, how often. */
export interface EventFacts {
  object: Involved;
  type: string;
  reason: string;
  message: string;
  first: string;
  last: string;
  count: number;
}

/** The body of a new Event, created as `name` in `namespace` and reported by `component`. */
export function newEvent(event: EventFacts, name: string, namespace: string, component: string): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Event",
    metadata: { name, namespace },
    involvedObject: event.object,
    reason: event.reason,
    message: clip(event.message),
    type: event.type,
    source: { component },
    reportingComponent: component,
    reportingInstance: component,
    firstTimestamp: event.first,
    lastTimestamp: event.last,
    eventTime: null,
    count: event.count,
  };
}

/** What the PATCH of an Event posted before changes: its count, its last time, its latest message. */
export function repeatPatch(count: number, last: string, message: string): Record<string, unknown> {
  return { count, lastTimestamp: last, message: clip(message) };
}

/**
 * A name of our own (as client-go's recorder: the object's name, a dot, a hex suffix) instead
 * of generateName: the answer then holds nothing we need, and is not parsed. `sequence` makes
 * it unique within this process.
 */
export function eventName(object: string, sequence: number): string {
  const suffix = Date.now().toString(16) + (sequence & 0xffffff).toString(16).padStart(6, "0");
  // A cut may end in "-" or ".": the name would not be a DNS subdomain (422), so those go too.
  return `${object.slice(0, MAX_NAME - suffix.length - 1).replace(/[-.]+$/, "")}.${suffix}`;
}

function clip(message: string): string {
  return message.length > MAX_MESSAGE ? message.slice(0, MAX_MESSAGE - 3) + "..." : message;
}
