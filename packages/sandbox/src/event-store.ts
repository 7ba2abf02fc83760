// One store of Events behind two APIs, as kube-apiserver keeps them: core/v1 and events.k8s.io/v1 Events are the
// same objects (an Event written through one is read, listed and watched through the other), stored in core/v1's
// shape and served in events.k8s.io/v1's through the conversion of kube's events/v1 package: involvedObject is
// `regarding`, message `note`, source `deprecatedSource`, count and first/lastTimestamp `deprecatedCount` and
// `deprecatedFirst/LastTimestamp`, reportingComponent `reportingController`. Each shape is written as Go writes its
// struct: the fields without omitempty always (an empty `source: {}`, a `firstTimestamp: null`, an empty
// `reportingComponent`), the empty omitempty ones never. Metadata (managedFields too) is shared as it is.

import { resourceKey, type ResourceDef } from "./resources.ts";

type Def = Pick<ResourceDef, "group" | "plural">;

const isNewEvents = (def: Def) => def.group === "events.k8s.io" && def.plural === "events";
const isCoreEvents = (def: Def) => def.group === "" && def.plural === "events";

/** [core/v1's name, events.k8s.io/v1's name] of the fields that differ */
const RENAMED: [string, string][] = [
  ["involvedObject", "regarding"], ["message", "note"], ["source", "deprecatedSource"],
  ["firstTimestamp", "deprecatedFirstTimestamp"], ["lastTimestamp", "deprecatedLastTimestamp"],
  ["count", "deprecatedCount"], ["reportingComponent", "reportingController"],
];
const TO_NEW = new Map(RENAMED);
const TO_CORE = new Map(RENAMED.map(([core, next]) => [next, core]));

/**
 * Each shape's fields in Go's order: the value a field without omitempty is written with when unset, or
 * `undefined` for an omitempty one (left out when empty: "", 0, null)
 */
const CORE_FIELDS: [string, unknown][] = [
  ["involvedObject", {}], ["reason", undefined], ["message", undefined], ["source", {}], ["firstTimestamp", null],
  ["lastTimestamp", null], ["count", undefined], ["type", undefined], ["eventTime", null], ["series", undefined],
  ["action", undefined], ["related", undefined], ["reportingComponent", ""], ["reportingInstance", ""],
];
const NEW_FIELDS: [string, unknown][] = [
  ["eventTime", null], ["series", undefined], ["reportingController", undefined], ["reportingInstance", undefined],
  ["action", undefined], ["reason", undefined], ["regarding", {}], ["related", undefined], ["note", undefined],
  ["type", undefined], ["deprecatedSource", {}], ["deprecatedFirstTimestamp", null],
  ["deprecatedLastTimestamp", null], ["deprecatedCount", undefined],
];

/** an Event's fields renamed by `names`, written in `fields`' order as Go writes them; other fields kept after */
function reshaped(event: any, apiVersion: string, names: Map<string, string>, fields: [string, unknown][]): any {
  const { kind: _k, apiVersion: _a, metadata, ...rest } = event;
  const renamed: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(rest)) renamed[names.get(key) ?? key] = value;
  const out: Record<string, unknown> = { kind: "Event", apiVersion, metadata };
  for (const [field, unset] of fields) {
    const value = renamed[field];
    delete renamed[field];
    const empty = value === undefined || value === null || value === "" || value === 0;
    if (!empty || (unset !== undefined && value !== undefined && value !== null)) out[field] = value;
    else if (unset !== undefined) out[field] = structuredClone(unset);
  }
  return { ...out, ...renamed };
}

/** a stored (core/v1) Event as events.k8s.io/v1 serves it */
export function coreToNew(event: any): any {
  return reshaped(event, "events.k8s.io/v1", TO_NEW, NEW_FIELDS);
}

/** an events.k8s.io/v1 Event as stored (core/v1), or a core/v1 one as Go writes it */
export function toCore(event: any, from: "new" | "core"): any {
  return reshaped(event, "v1", from === "new" ? TO_CORE : new Map(), CORE_FIELDS);
}

/** where a resource's objects are stored: events.k8s.io/v1's Events with core/v1's */
export function storeKey(def: Def): string {
  return isNewEvents(def) ? resourceKey("", "events") : resourceKey(def.group, def.plural);
}

/** a stored object as the resource serves it (before its version's apiVersion is set) */
export function fromStored(def: Def, body: any): any {
  return isNewEvents(def) && body !== undefined ? coreToNew(body) : body;
}

/** an object written through the resource as stored */
export function toStored(def: Def, body: any): any {
  if (isNewEvents(def)) return toCore(body, "new");
  return isCoreEvents(def) ? toCore(body, "core") : body;
}
