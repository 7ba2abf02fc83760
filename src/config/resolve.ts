// Defaults ← config file ← OTEL_* environment ← flags, into one validated, deeply frozen Settings object.
// The schema is walked once over the file's data; every problem (unknown key, wrong type,
// out of range, conflicting values) is collected, and all of them are thrown together in
// one ConfigError, one per line, so a user fixes the file in one go.

import { formatDuration } from "./duration.ts";
import { applyEnv } from "./env.ts";
import { atLine, closestMatch, ConfigError, configIssue, describeValue, type ConfigIssue } from "./errors.ts";
import type { Field, Node, Section } from "./fields.ts";
import { defaultConfigPath, lineOf, loadConfigFile, resourceKeyLines } from "./file.ts";
import { DEV_PRIORITY, flagName, type FlagValues } from "./flags.ts";
import { resolveNamespaces, splitNamespaceEntries } from "./namespaces.ts";
import { checkResourceBackoffs, readResources } from "./resources.ts";
import { SETTINGS_SCHEMA, type SchemaValues } from "./schema.ts";
import { type Settings } from "./settings.ts";

export interface ResolveInput {
  /** Path of the config file; also names `fileData` in messages. Falls back to flags.config. */
  file?: string;
  /** Already-parsed file contents (skips reading `file`). */
  fileData?: unknown;
  flags?: Partial<FlagValues>;
  /**
   * The environment: its OTEL_* variables override the file's `tracing:` (the CLI passes process.env; none by
   * default).
   */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * Look for the default `kobun.yaml` here when no file is named (dev and manifests pass process.cwd(); run finds
   * it itself, without node:fs).
   */
  cwd?: string;
}

type Tree = Record<string, unknown>;

/** Flags that set one schema field directly, and where. */
const FLAG_FIELDS: ReadonlyArray<readonly [keyof FlagValues, string, string]> = [
  ["kubeconfig", "kube", "kubeconfig"],
  ["context", "kube", "context"],
  ["http1", "kube", "http1"],
  ["standalone", "peering", "standalone"],
  ["priority", "peering", "priority"],
  ["peering", "peering", "name"],
  ["liveness", "probes", "liveness"],
  ["metricsAddr", "metrics", "address"],
  ["logFormat", "logging", "format"],
  ["webhooksUrl", "webhooks", "url"],
  ["webhooksListen", "webhooks", "listen"],
  ["webhooksName", "webhooks", "name"],
  ["replicas", "sharding", "replicas"],
  ["shards", "sharding", "shards"],
  ["shardKey", "sharding", "key"],
];

/** Validates everything and returns the settings; throws one ConfigError listing every problem. */
export function resolveSettings(input: ResolveInput = {}): Readonly<Settings> {
  const flags = input.flags ?? {};
  const named = input.file ?? flags.config;
  const path = named ?? (input.cwd !== undefined && input.fileData === undefined ? defaultConfigPath(input.cwd) : null);
  const file = path ?? "config";
  const data = input.fileData !== undefined ? input.fileData : path !== null ? loadConfigFile(path) : undefined;

  const issues: ConfigIssue[] = [];
  // `resources:` is keyed by the handlers' selectors, not by the schema: read on its own.
  const { resources: rawResources, ...rest } = isMapping(data) ? data : { resources: undefined };
  const fileValues = isMapping(data) ? rest : (data ?? null);
  const values = readSection(SETTINGS_SCHEMA, fileValues, [], file, issues, ["resources"]) as Tree;
  const resources = readResources(rawResources, file, resourceKeyLines(data), issues);
  if (input.env) applyEnv(values, input.env, issues);
  applyFlags(values, flags, issues);
  // The walk gave every key of the schema a value its field read (or its default), so the
  // tree is the schema's type; Settings is computed from it, with no interface to cast to.
  const checked = values as SchemaValues;
  checkRelations(checked, file, issues);
  checkResourceBackoffs(resources, checked.reconcile.backoff, issues);
  if (issues.length > 0) {
    const located = (issue: ConfigIssue) =>
      issue.file === file ? atLine(issue, lineOf(data, issue.path ?? "")) : issue;
    throw new ConfigError(issues.map(located));
  }

  const namespaces = resolveNamespaces(checked.namespaces);
  const settings: Settings = {
    ...checked,
    peering: { ...checked.peering, clusterwide: checked.peering.clusterwide ?? namespaces.allNamespaces },
    sharding: { ...checked.sharding, enabled: checked.sharding.replicas !== 1 },
    namespaces,
    resources,
  };
  return deepFreeze(settings);
}

function readSection(
  node: Section<Record<string, Node>>, raw: unknown, path: string[], file: string, issues: ConfigIssue[],
  extraKeys: string[] = [],
): Tree {
  const keys = [...Object.keys(node.fields), ...extraKeys];
  const given: Tree = raw === null || raw === undefined ? {} : isMapping(raw) ? raw : {};
  if (raw !== null && raw !== undefined && !isMapping(raw)) {
    const where = path.length > 0 ? path.join(".") : "(top level)";
    const message = `expected a mapping with keys ${keys.join(", ")}; got ${describeValue(raw)}`;
    issues.push(configIssue({ file, path: where, expected: "a mapping" }, message));
  }
  for (const key of Object.keys(given)) {
    if (keys.includes(key)) continue;
    const suggestion = closestMatch(key, keys);
    const hint = suggestion ? `; did you mean "${suggestion}"?` : "";
    const message = `unknown key${hint} (allowed here: ${keys.join(", ")})`;
    issues.push(configIssue({ file, path: [...path, key].join(".") }, message));
  }
  const result: Tree = {};
  for (const [key, child] of Object.entries(node.fields)) {
    const childPath = [...path, key];
    if (child.kind === "section") {
      result[key] = readSection(child, given[key], childPath, file, issues);
    } else if (!(key in given)) {
      result[key] = child.default;
    } else {
      result[key] = readField(child, given[key], { file, path: childPath.join(".") }, issues);
    }
  }
  return result;
}

/** The field's typed value, or its default after recording what was wrong. */
function readField<T>(
  field: Field<T>, raw: unknown, where: { file?: string; flag?: string; path: string }, issues: ConfigIssue[],
): T {
  const result = field.read(raw);
  if (result.ok) return result.value;
  const path = where.path + (result.at?.suffix ?? "");
  const got = result.at ? result.at.got : raw;
  const message = `expected ${result.expected}, got ${describeValue(got)}`;
  issues.push(configIssue({ ...where, path, expected: result.expected }, message));
  return field.default;
}

function applyFlags(values: Tree, flags: Partial<FlagValues>, issues: ConfigIssue[]): void {
  const fields = SETTINGS_SCHEMA.fields;
  for (const [key, sectionName, fieldName] of FLAG_FIELDS) {
    const raw = flags[key];
    if (raw === undefined) continue;
    const section = fields[sectionName as keyof typeof fields] as Section<Record<string, Node>>;
    const field = section.fields[fieldName] as Field<unknown>;
    const target = values[sectionName] as Tree;
    target[fieldName] = readField(field, raw, { flag: flagName(key), path: `${sectionName}.${fieldName}` }, issues);
  }
  if (flags.dev) Object.assign(values.peering as Tree, { standalone: false, priority: DEV_PRIORITY });
  const logging = values.logging as Tree;
  if (flags.verbose && flags.quiet) {
    issues.push(configIssue({ flag: "--quiet", path: "logging.level" }, "cannot be combined with --verbose"));
  } else if (flags.verbose) logging.level = "debug";
  else if (flags.quiet) logging.level = "warn";

  if (flags.namespaces?.length || flags.allNamespaces) {
    // Any namespace flag replaces the file's whole namespace selection: -n and -A say where to watch, completely.
    const where = { flag: flagName("namespaces"), path: "namespaces.include" };
    const include = readField(fields.namespaces.fields.include, flags.namespaces ?? [], where, issues);
    values.namespaces = { include, exclude: [], allNamespaces: flags.allNamespaces === true, fromFlags: true };
  }
}

/** Checks between fields, each only when both fields were themselves valid. */
function checkRelations(
  values: SchemaValues & { namespaces: { fromFlags?: boolean } }, file: string, issues: ConfigIssue[],
): void {
  const failed = new Set(issues.map((issue) => issue.path));
  const lessThan = (path: string, value: number, limitPath: string, limit: number, orEqual = false) => {
    if (failed.has(path) || failed.has(limitPath) || value < limit || (orEqual && value === limit)) return;
    const expected = `${orEqual ? "at most" : "less than"} ${limitPath} (${formatDuration(limit)})`;
    issues.push(configIssue({ file, path, expected }, `expected ${expected}, got ${formatDuration(value)}`));
  };
  const { lease } = values.peering;
  lessThan("peering.lease.renewDeadline", lease.renewDeadline, "peering.lease.duration", lease.duration);
  lessThan("peering.lease.retryPeriod", lease.retryPeriod, "peering.lease.renewDeadline", lease.renewDeadline);
  checkLeaseStop(values.peering, values.sharding.replicas !== 1, failed, file, issues);
  checkSharding(values, failed, file, issues);
  const { certFile, keyFile } = values.webhooks;
  const certsChecked = !failed.has("webhooks.certFile") && !failed.has("webhooks.keyFile");
  if ((certFile === null) !== (keyFile === null) && certsChecked) {
    const path = certFile === null ? "webhooks.certFile" : "webhooks.keyFile";
    issues.push(configIssue(
      { file, path, expected: "certFile and keyFile together" },
      "expected both webhooks.certFile and webhooks.keyFile, or neither (self-signed)",
    ));
  }
  if (values.webhooks.clientCertRequired && values.webhooks.clientCaFile === null) {
    const path = "webhooks.clientCertRequired";
    issues.push(configIssue(
      { file, path, expected: "webhooks.clientCaFile set" },
      "expected webhooks.clientCaFile too: client certificates are verified against it",
    ));
  }
  const { backoff } = values.watching;
  lessThan("watching.backoff.initial", backoff.initial, "watching.backoff.max", backoff.max, true);
  const reconcile = values.reconcile.backoff;
  lessThan("reconcile.backoff.initial", reconcile.initial, "reconcile.backoff.max", reconcile.max, true);

  const { namespaces } = values;
  const positive = splitNamespaceEntries(namespaces.include).include;
  if (namespaces.allNamespaces && positive.length > 0) {
    const where = namespaces.fromFlags ? { flag: "--all-namespaces" } : { file, path: "namespaces.allNamespaces" };
    const detail = `cannot be combined with included namespaces (${positive.join(", ")}); ` +
      'to narrow a cluster-wide watch, exclude with "!glob"';
    issues.push(configIssue({ ...where, expected: "only exclusions alongside it" }, detail));
  }
}

/**
 * Sharding needs at least one shard per replica, and it is the opposite of lease mode (one
 * active replica): both at once would leave all but one replica idle.
 */
function checkSharding(
  values: SchemaValues, failed: ReadonlySet<string | undefined>, file: string, issues: ConfigIssue[],
): void {
  const { replicas, shards } = values.sharding;
  if (replicas === 1 || failed.has("sharding.replicas")) return;
  if (typeof replicas === "number" && !failed.has("sharding.shards") && shards < replicas) {
    const expected = `at least sharding.replicas (${replicas})`;
    const message = `expected ${expected}, so that every replica owns a shard; got ${shards}`;
    issues.push(configIssue({ file, path: "sharding.shards", expected }, message));
  }
  if (values.peering.mode === "lease" && !failed.has("peering.mode")) {
    issues.push(configIssue(
      { file, path: "sharding.replicas" },
      'sharding cannot be combined with peering.mode "lease" (one active replica); ' +
        'use peering.mode "peering" with sharding, or sharding.replicas: 1',
    ));
  }
}

/**
 * A lease holder that cannot renew freezes at renewDeadline and stops its handlers within
 * freezeGracePeriod: that must end before the lease can expire, or a standby starts the same
 * handlers meanwhile (client-go validates its timings for the same reason).
 */
function checkLeaseStop(
  peering: SchemaValues["peering"], sharding: boolean, failed: ReadonlySet<string | undefined>, file: string,
  issues: ConfigIssue[],
): void {
  const { lease, freezeGracePeriod: grace } = peering;
  const path = "peering.freezeGracePeriod";
  if (peering.mode !== "lease" && !sharding) return;
  if ([path, "peering.lease.renewDeadline", "peering.lease.duration"].some((p) => failed.has(p))) return;
  if (lease.renewDeadline >= lease.duration || lease.renewDeadline + grace < lease.duration) return;
  const why = peering.mode === "lease" ? "in lease mode" : "with sharding (shard Leases use peering.lease's timings)";
  const window = formatDuration(lease.duration - lease.renewDeadline);
  const expected = `less than peering.lease.duration - peering.lease.renewDeadline (${window}) ${why}`;
  const got = formatDuration(grace);
  const message = `expected ${expected}, so that handlers stop before the lease can expire; got ${got}`;
  issues.push(configIssue({ file, path, expected }, message));
}

function isMapping(value: unknown): value is Tree {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
