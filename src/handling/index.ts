// handling/: the engine of one cycle of one object, running what declaring/ registered: which
// cause (selection.ts), which handlers, run them and the sub-handlers they register with
// retries/timeouts/progress (due.ts, subhandlers.ts, runner.ts), and
// plan ONE merged patch per cycle (cycle.ts); the bookkeeping on the object (progress.ts,
// diffbase.ts, essence.ts); ctx.api (api.ts) and the indexes (indexes.ts) behind the interfaces
// declaring/ gives handlers. Imports declaring/, kube/, posting/, util/. The per-object loop that
// feeds it, and the writing of the plans, are reconciling/'s.
// Must never write a plan itself (reconciling/ does), nor watch or queue anything of its own: its one
// use of kube/'s client is ctx.api (api.ts), the requests a handler makes.

export {
  runCycle, deleteHandlerApplies, causeTitle,
  type CycleEnv, type CyclePlan, type FinalizerTerms, type HandlerRun, type ObjectState,
} from "./cycle.ts";
export { runHandler, type HandlingDefaults, type RunOutcome } from "./runner.ts";
export { ApiClient, type ApiClientOptions, type WatchFn, type WriteListener } from "./api.ts";
export { CacheView, lookupAmong, type CacheLookup, type CachedResource, type IndexedUids } from "./cache.ts";
export { Indexes, type IndexedStream } from "./indexes.ts";
export { readBookkeeping, type StorageMode } from "./progress.ts";
export { compactPatch, lendSignal, newPatch, objectContext, type HandlerTools } from "./context.ts";
export { sensitiveFields } from "./diffbase.ts";
export { eventRecorder, NO_EVENTS } from "./recorder.ts";
export { combinePatches, essenceOf } from "./essence.ts";
export { asAnnotations, asStatus, hasChange } from "./progress.ts";
export { objectFiltersPass } from "./selection.ts";
