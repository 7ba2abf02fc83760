// reconciling/: one object's life, above queueing/ (one worker per object), watching/ (the
// events) and handling/ (the engine of one cycle: cause → handlers → planned patch). It holds the
// per-object loop: which events are worth a cycle, when to run again (life.ts), the whole
// finalizer flow, decided and acted on (finalizer.ts), what a freeze does to an object in flight
// (ownership.ts), the daemons and timers (daemons/: background-phases.ts, background.ts, one call
// of one in background-calls.ts; apart from the loop, FORBIDDEN in rooms.ts), on.reconcile's
// engine (reconcile/: one call, its plan, its mode in reconcile-*.ts; fresh-read.ts; the wakes an
// owned or watched object's event causes, wakes.ts; which of a call's writes are blind, their echoes
// waking nothing, echo-scope.ts; it plans, the loop tracks and writes, FORBIDDEN
// in rooms.ts), and the writing of the planned patches, fenced against a new object of the same
// name (patching.ts, fence.ts, refusal.ts).
// It is the home of the per-object engines: a new per-object handler kind runs here (or, for one
// cycle's handlers, in handling/).
// Files come in pairs, one rule for the room: the pure part (transitions, `now` passed in) is
// named after what it models (life.ts: an object's life; background-phases.ts: the phases of a
// daemon or timer), the I/O part after its class (reconciler.ts: Reconciler; background.ts:
// Background).
// Must never decide which handlers run (handling/ does), open watches (streams/ does), run two
// cycles of one object at once, or write for an object no longer ours (a freeze, a shard handed
// over) or whose deletion it saw.

export { Reconciler, type ReconcilerOptions, type ReconcilerSettings } from "./reconciler.ts";
export { readsDeletedBodies, type ReconcileWiring } from "./options.ts";
export { type ReconcileObserver, type ReconcileResult } from "./reconciler.ts";
export { named, withWakes, type WakingConsumer } from "./reconcile/wakes.ts";
export { type EchoBook, type EchoBooks } from "./reconcile/echo-scope.ts";
