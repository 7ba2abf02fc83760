// caching/: the known objects of each watched resource, one Store per resource (store.ts), after
// kube-rs's reflector Store and controller-runtime's cache. Its watch streams write it, each
// through a Shelf of its own (shelf.ts: what that stream knows, its relist's synthetic
// deletions, where its state is complete); everything else reads it through `KnownObjects`:
// by name, by namespace and labels (labels.ts), the resourceVersion held, a bounded wait until
// it has caught up with a resourceVersion, and its changes as they are written. What it keeps of
// an object is its body, or its identity (identity.ts) when no reader needs bodies.
//
// Files: store.ts (the read side, the lookup by name, the waits), shelf.ts (the write side, one
// stream's part), identity.ts (an object kept without its body), keys.ts, labels.ts; own-writes.ts
// (our writes laid over a store), own-echoes.ts (which events are only the echo of a blind write).
//
// Must never: import anything but kube/ (types, resourceVersion order) and util/; do I/O, start a
// timer other than a wait's own bound, or hold a promise past its wait; let a relist of one
// stream delete another stream's objects; grow what a known object costs for a reader that
// is not there (bodies, the lookup by name).

export { Store, type CatchUpOptions, type KnownObjects, type ListOptions, type StoreChange } from "./store.ts";
export { Shelf } from "./shelf.ts";
export { labelTest, type LabelTest } from "./labels.ts";
export { OwnWrites, LAPSE_MS } from "./own-writes.ts";
export { OwnEchoes, type EchoSettle } from "./own-echoes.ts";
