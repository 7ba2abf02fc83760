// reconciling/: one object's life, above queueing/ (one worker per object), watching/ (the
// events) and handling/ (the pure engine: cause → handlers → planned patch). It holds the
// per-object loop: which events are worth a cycle, when to run again (life.ts, a pure state
// machine), the finalizer table (finalizer.ts), what a freeze does to an object in flight
// (ownership.ts), and the writing of the planned patches (patching.ts, refusal.ts).
// Must never decide which handlers run (handling/ does), nor open watches (runtime/ does).

export { Reconciler, type ReconcilerOptions, type ReconcilerSettings } from "./reconciler.ts";
