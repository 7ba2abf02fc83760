// reconciling/: one object's life, above queueing/ (one worker per object), watching/ (the
// events) and handling/ (the pure engine: cause → handlers → planned patch). It holds the
// per-object loop: which events are worth a cycle, when to run again, and what a freeze or
// a deletion does to an object in flight.
// Must never decide which handlers run (handling/ does), nor open watches (runtime/ does).

export { Reconciler, type ReconcilerOptions, type ReconcilerSettings, type Counters } from "./reconciler.ts";
