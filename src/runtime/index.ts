// runtime/: the wiring. It owns the root task scope, the freeze toggle and graceful shutdown,
// and is the embedding API: `run({ signal, settings })`. It may import every room below it
// (test/contracts/rooms.ts). Which watch streams run, and keeping them running, is streams/'s;
// running the handlers is the engines' (handling/, reconciling/, activities/, admission/): runtime/
// reads the settings into their options and says when each starts and stops.
// Must never install signal handlers (the CLI does), nor return from run() with anything it
// started still running: no socket, no timer, no promise.
// This file is runtime's face: run() and what a caller hands it (settings, a toggle, a Logger
// and its sink) or gets back from it (its exit codes), the logger it makes, the manifests beside
// the handlers, and the settings' view of resources that `kobun manifests` shares with run().
// Two lighter faces stand beside it (rooms.ts, INNER_FACES): exits.ts, which every command needs
// before it loads anything heavy, and dev.ts, which carries the sandbox and is loaded only by
// `kobun dev` and the test kit.

export { run, type RunOptions, type RunReport, type StartedInfo } from "./operator.ts";
export { FatalError, ExitCode } from "./exits.ts";
export { loggerFor } from "./logging.ts";
export { manifestCRDs, manifestObjects, withDefinitions, type Manifest } from "./manifests.ts";
export { checkResourceKeys, enabledSelectors, enabledWebhooks } from "./resources.ts";
export { watchResource } from "./handler-api.ts";
export { resolveSettings, ConfigError, type Settings } from "../config/index.ts";
export {
  Toggle, Logger, memorySink, stderrSink, type LogSink, type LogLevel, type LogFormat, type MemorySink,
  type MemorySinkOptions,
} from "../util/index.ts";
