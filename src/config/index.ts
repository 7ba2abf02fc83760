// config/: the kobun.yaml file and `kobun run` flags → one validated, typed, deeply frozen
// Settings object. Precedence: flags over the OTEL_* environment (tracing only) over the file
// over the schema's defaults. Every bad value gets a precise message naming the file (or flag),
// the key path, what was expected and what was got.
// Must never connect to anything, or stop at the first bad value (all are reported together).
// Imports only util/ (the trace samplers' names), node:* and yaml.

export { ConfigError, UsageError, closestMatch, configIssue, type ConfigIssue } from "./errors.ts";
export { parseDuration, formatDuration } from "./duration.ts";
export {
  defaultConfigPath, findConfigFile, loadConfigFile, parseConfigText, readConfigFile, DEFAULT_CONFIG_FILE,
} from "./file.ts";
export {
  parseRunFlags, runFlagsHelp, scanFlags, DEV_PRIORITY, RUN_FLAGS, type FlagSpec, type FlagValues,
} from "./flags.ts";
export { namespaceMatcher, isClusterWide, fixedNamespaces, isGlob, resourceNamespaces } from "./namespaces.ts";
export { resolveSettings, type ResolveInput } from "./resolve.ts";
export { renderExampleConfig } from "./example.ts";
export { resourcesAsYaml, type ResourceSettings } from "./resources.ts";
export { keyNames, resourcesNamed, type KeyCandidate } from "./resource-keys.ts";
export { SETTINGS_SCHEMA, metricsUrl, type LogLevel } from "./schema.ts";
export type { Settings, PeeringSettings, NamespaceSettings } from "./settings.ts";
export { parseListen } from "./webhooks.ts";
