// runtime/: the wiring. It owns the root task scope, the freeze toggle and graceful shutdown,
// and is the embedding API: `run({ signal, settings })`. It may import every room below it
// (test/contracts/rooms.ts). Which watch streams run, and keeping them running, is streams/'s.
// Must never install signal handlers (the CLI does), nor return from run() with anything it
// started still running: no socket, no timer, no promise.
// This file is what the public API (src/index.ts) takes from runtime: run() and what a
// caller hands it (settings, a toggle) or gets back from it (its exit codes and errors).

export { run, type RunOptions, type RunReport } from "./operator.ts";
export { FatalError, ExitCode } from "./exits.ts";
export { resolveSettings, ConfigError, type Settings } from "../config/index.ts";
export { Toggle } from "../util/toggle.ts";
