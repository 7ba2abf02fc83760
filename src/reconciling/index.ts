// reconciling/: one object's life, above queueing/ (one worker per object), watching/ (the
// events) and handling/ (the engine of one cycle: cause → handlers → planned patch). It holds the
// per-object loop: which events are worth a cycle, when to run again (life.ts, a pure state
// machine), the finalizer table (finalizer.ts), what a freeze does to an object in flight
// (ownership.ts), the daemons and timers (background.ts, pure; spawning.ts, the I/O), and the
// writing of the planned patches, fenced against a new object of the same name (patching.ts,
// fence.ts, refusal.ts).
// Must never decide which handlers run (handling/ does), open watches (streams/ does), run two
// cycles of one object at once, or write for an object no longer ours (a freeze, a shard handed
// over) or whose deletion it saw.

export { Reconciler, type ReconcilerOptions, type ReconcilerSettings } from "./reconciler.ts";
