// queueing/: multiplexes items into one worker per key. workers.ts is the runner (never one
// key twice, at most `limit` at once); schedule.ts the scheduler (latest wins, the batch
// window's throttle, delayed re-runs, idleness). Imports only util/.
export { Workers, type WorkersOptions, type Outcome } from "./workers.ts";
export type { QueueFigures, QueueObserver } from "./observer.ts";
