// queueing/: multiplexes items into one worker per key; see workers.ts. Imports only util/.
export { Workers, type WorkersOptions, type Outcome } from "./workers.ts";
