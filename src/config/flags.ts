// Command-line flags of `kobun run` (argv after the subcommand): a table of known flags,
// the parser (`--flag value`, `--flag=value`, `-n NS` repeated, `--` ends flags), and the
// help text. The parser (`scanFlags`) also reads the other commands' flags (cli/args.ts). Flags
// only capture what the user typed; resolve.ts validates the values against the settings schema
// and lets them override the config file.

import { closestMatch, ConfigError, UsageError } from "./errors.ts";

/** What the command line said; every key is optional (absent = not given). */
export interface FlagValues {
  config: string;
  kubeconfig: string;
  context: string;
  /** Only HTTP/1.1 to the API server. */
  http1: boolean;
  /** Names, globs, and "!glob" exclusions; `-n a,b` is split at commas. */
  namespaces: string[];
  allNamespaces: boolean;
  standalone: boolean;
  priority: number;
  /** A developer's operator (Kopf's `--dev`): peering on, at priority DEV_PRIORITY, whatever else says. */
  dev: boolean;
  /** Name of the peering object. */
  peering: string;
  liveness: string;
  webhooksUrl: string;
  webhooksListen: string;
  webhooksName: string;
  metricsAddr: string;
  logFormat: string;
  /** Log level debug. */
  verbose: boolean;
  /** Log level warn. */
  quiet: boolean;
  /** "auto" or a count, as typed; the schema validates it. */
  replicas: string;
  shards: number;
  shardKey: string;
}

/** One flag a command knows. */
export interface FlagSpec<K extends string = string> {
  readonly key: K;
  readonly long: string;
  readonly short?: string;
  /** Placeholder of the value, or absent for a switch. */
  readonly value?: string;
}

interface RunFlagSpec extends FlagSpec<keyof FlagValues> {
  readonly doc: string;
}

/**
 * The peering priority of `--dev` (Kopf's number, so a kobun and a Kopf operator agree on who outranks whom):
 * above any deployed operator's usual priority, so they freeze while the developer's one runs.
 */
export const DEV_PRIORITY = 666;

export const RUN_FLAGS: readonly RunFlagSpec[] = [
  { key: "config", long: "config", value: "FILE", doc: "Config file (default: ./kobun.yaml when it exists)." },
  { key: "kubeconfig", long: "kubeconfig", value: "FILE", doc: "Kubeconfig file." },
  { key: "context", long: "context", value: "NAME", doc: "Kubeconfig context." },
  {
    key: "http1", long: "http1",
    doc: "Speak only HTTP/1.1 to the API server (default: HTTP/2 when it is https and selects it).",
  },
  {
    key: "namespaces", long: "namespace", short: "n", value: "NS",
    doc: 'Namespace, glob ("team-*") or exclusion ("!kube-*"); repeatable.',
  },
  { key: "allNamespaces", long: "all-namespaces", short: "A", doc: "Watch all namespaces." },
  { key: "standalone", long: "standalone", doc: "No peering: never freeze." },
  { key: "priority", long: "priority", value: "N", doc: "Peering priority (integer)." },
  {
    key: "dev", long: "dev",
    doc: `A developer's operator: peering priority ${DEV_PRIORITY}, so deployed ones freeze while it runs (Kopf's).`,
  },
  { key: "peering", long: "peering", value: "NAME", doc: "Name of the peering object." },
  {
    key: "replicas", long: "replicas", value: "auto|N",
    doc: "Share the objects among N replicas (or as many as are live: auto) by shards; 1 = no sharding.",
  },
  { key: "shards", long: "shards", value: "N", doc: "How many shards the hash space is cut into (default 24)." },
  {
    key: "shardKey", long: "shard-key", value: "uid|namespace",
    doc: "What places an object in a shard (default uid).",
  },
  {
    key: "liveness", long: "liveness", value: "URL",
    doc: 'Serve /healthz and /metrics, e.g. "http://0.0.0.0:8080/healthz".',
  },
  {
    key: "webhooksUrl", long: "webhooks-url", value: "URL",
    doc: "Development: the API server calls the webhooks at this https:// URL (URL-based configurations).",
  },
  {
    key: "webhooksListen", long: "webhooks-listen", value: "HOST:PORT",
    doc: 'Serve the admission/conversion webhooks here, e.g. "0.0.0.0:9443".',
  },
  {
    key: "webhooksName", long: "webhooks-name", value: "NAME",
    doc: "Names the webhook configurations and the Service (default kobun-operator).",
  },
  {
    key: "metricsAddr", long: "metrics-addr", value: "ADDR",
    doc: 'Serve /metrics also at ADDR, e.g. ":8080" (off by default).',
  },
  { key: "logFormat", long: "log-format", value: "plain|json", doc: "Log line format." },
  { key: "verbose", long: "verbose", short: "v", doc: "Log debug messages." },
  { key: "quiet", long: "quiet", short: "q", doc: "Log only warnings and errors." },
];

/** The flag as users type it, for messages about a flag value: "--priority". */
export function flagName(key: keyof FlagValues): string {
  const spec = RUN_FLAGS.find((candidate) => candidate.key === key);
  return spec ? `--${spec.long}` : `--${key}`;
}

/** Parses `kobun run` arguments; throws UsageError for unknown flags, missing or malformed values. */
export function parseRunFlags(argv: readonly string[]): { flags: Partial<FlagValues>; positionals: string[] } {
  const flags: Partial<FlagValues> = {};
  const positionals = scanFlags(argv, RUN_FLAGS, (spec, typed, value) => {
    if (value === true) (flags as Record<string, unknown>)[spec.key] = true;
    else storeValue(flags, spec, typed, value);
  });
  if (flags.verbose && flags.quiet) throw new UsageError("--verbose and --quiet cannot be used together", "--quiet");
  if (flags.dev) checkDev(flags);
  return { flags, positionals };
}

/** `--dev` with --priority or --standalone would mean two things (resolve.ts makes it the priority and peering). */
function checkDev(flags: Partial<FlagValues>): void {
  if (flags.priority !== undefined) {
    throw new UsageError(`--dev sets the peering priority to ${DEV_PRIORITY}: give --dev or --priority, not both`,
      "--priority");
  }
  if (flags.standalone) {
    throw new UsageError("--dev outranks the other operators through peering; --standalone does not peer", "--dev");
  }
}

/**
 * Reads `--flag value`, `--flag=value`, `-f value` and switches (`true`) against `specs`,
 * handing each to `store`; `--` ends the flags. Returns the positionals. Throws UsageError
 * for an unknown flag (suggesting the closest), a missing value or a value given to a switch.
 */
export function scanFlags<S extends FlagSpec>(
  argv: readonly string[], specs: readonly S[], store: (spec: S, typed: string, value: string | true) => void,
): string[] {
  const positionals: string[] = [];
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index] ?? "";
    if (arg === "--") {
      positionals.push(...argv.slice(index + 1));
      break;
    }
    if (!arg.startsWith("-") || arg === "-") {
      positionals.push(arg);
      continue;
    }
    const equals = arg.indexOf("=");
    const typed = equals >= 0 ? arg.slice(0, equals) : arg;
    const spec = findFlag(typed, specs);
    let value: string | undefined = equals >= 0 ? arg.slice(equals + 1) : undefined;
    if (spec.value === undefined) {
      if (value !== undefined) throw new UsageError(`${typed} takes no value, got ${JSON.stringify(value)}`, typed);
      store(spec, typed, true);
      continue;
    }
    if (value === undefined) {
      const next = argv[index + 1];
      if (next === undefined || (next.startsWith("-") && next !== "-" && !/^-\d/.test(next))) {
        throw new UsageError(`${typed} needs a value (${spec.value})`, typed);
      }
      value = next;
      index++;
    }
    store(spec, typed, value);
  }
  return positionals;
}

function findFlag<S extends FlagSpec>(typed: string, specs: readonly S[]): S {
  const spec = typed.startsWith("--")
    ? specs.find((candidate) => candidate.long === typed.slice(2))
    : specs.find((candidate) => candidate.short !== undefined && candidate.short === typed.slice(1));
  if (spec) return spec;
  const known = specs.flatMap((candidate) => [
    `--${candidate.long}`, ...(candidate.short ? [`-${candidate.short}`] : []),
  ]);
  const suggestion = closestMatch(typed, known.filter((name) => name.startsWith("--") === typed.startsWith("--")));
  const hint = suggestion ? `; did you mean ${suggestion}?` : `; known flags: ${known.join(", ")}`;
  throw new UsageError(`unknown flag ${typed}${hint}`, typed);
}

function storeValue(flags: Partial<FlagValues>, spec: RunFlagSpec, typed: string, value: string): void {
  switch (spec.key) {
    case "namespaces": {
      const entries = value.split(",").map((entry) => entry.trim()).filter((entry) => entry !== "");
      if (entries.length === 0) throw new UsageError(`${typed} needs a namespace name or glob`, typed);
      flags.namespaces = [...(flags.namespaces ?? []), ...entries];
      return;
    }
    case "priority": {
      if (!/^[-+]?\d+$/.test(value)) throw badValue(typed, "an integer", value);
      flags.priority = Number(value);
      return;
    }
    case "shards": {
      if (!/^\d+$/.test(value)) throw badValue(typed, "a positive integer", value);
      flags.shards = Number(value);
      return;
    }
    default:
      (flags as Record<string, unknown>)[spec.key] = value;
  }
}

/**
 * A flag value that fails validation: a ConfigError (exit 3), as a bad value of kobun.yaml's or of any other
 * flag's.
 */
function badValue(typed: string, expected: string, value: string): ConfigError {
  const line = `${typed} expects ${expected}, got ${JSON.stringify(value)}`;
  return new ConfigError([{ flag: typed, expected, line }]);
}

/** Help text for `kobun run` (or `usage`, without the flags in `omit`), one flag per line. */
export function runFlagsHelp(usage = "kobun run [flags] [handler files...]", omit: readonly string[] = []): string {
  const rows = RUN_FLAGS.filter((spec) => !omit.includes(spec.long)).map((spec) => {
    const short = spec.short ? `-${spec.short}, ` : "    ";
    const names = [short, `--${spec.long}`, spec.value ? ` ${spec.value}` : ""].join("");
    return `  ${names.padEnd(30)} ${spec.doc}`;
  });
  return [`Usage: ${usage}`, "", "Flags:", ...rows].join("\n");
}
