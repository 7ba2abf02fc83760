// queueing/: multiplexes items into one worker per key. workers.ts is the runner (never one
// key twice, at most `limit` at once); slot.ts a key's latest-wins mailbox (the pure part);
// schedule.ts the scheduler (the batch window's throttle, delayed re-runs, idleness) and
// lines.ts its ready lines (news before re-checks). Imports only util/.
// Must never: run two items of one key at once, drop a key's newest item, or know what a
// Kubernetes object is (keys and items only).
export { Workers, type WorkersOptions, type Outcome, type Priority, type PushOptions } from "./workers.ts";
export type { QueueFigures, QueueObserver } from "./observer.ts";
