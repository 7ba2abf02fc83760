// activities/: the engine of the operator-wide handlers, those that run once per process, not per
// object: on.login (credentials, asked again at each renewal), on.startup (before any watch,
// retried by the handler rules), on.cleanup (after everything stopped, within the grace),
// on.probe (values in /healthz). It runs
// what declaring/ registered (its ActivitySpecs); runtime/ decides when each runs and maps a
// StartupError to its exit code. A new operator-wide handler kind gets its engine here.
// Must never watch, queue or handle objects (the per-object engines, handling/ and reconciling/,
// do), read settings (runtime/ hands in what it needs), or exit the process.

export {
  loginOf, probeValues, runCleanup, runStartup, StartupError, type ActivityWiring,
} from "./activities.ts";
