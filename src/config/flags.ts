// Command-line flags of `kobun run` (argv after the subcommand): a table of known flags,
// the parser (`--flag value`, `--flag=value`, `-n NS` repeated, `--` ends flags), and the
// help text. Flags only capture what the user typed; resolve.ts validates the values
// against the settings schema and lets them override the config file.

import { closestMatch, UsageError } from "./errors.ts";

/** What the command line said; every key is optional (absent = not given). */
export interface FlagValues {
  config: string;
  kubeconfig: string;
  context: string;
  /** Names, globs, and "!glob" exclusions; `-n a,b` is split at commas. */
  namespaces: string[];
  allNamespaces: boolean;
  standalone: boolean;
  priority: number;
  /** Name of the peering object. */
  peering: string;
  liveness: string;
  logFormat: string;
  /** Log level debug. */
  verbose: boolean;
  /** Log level warn. */
  quiet: boolean;
}

interface FlagSpec {
  readonly key: keyof FlagValues;
  readonly long: string;
  readonly short?: string;
  /** Placeholder of the value, or absent for a switch. */
  readonly value?: string;
  readonly doc: string;
}

export const RUN_FLAGS: readonly FlagSpec[] = [
  { key: "config", long: "config", value: "FILE", doc: "Config file (default: ./kobun.yaml when it exists)." },
  { key: "kubeconfig", long: "kubeconfig", value: "FILE", doc: "Kubeconfig file." },
  { key: "context", long: "context", value: "NAME", doc: "Kubeconfig context." },
  { key: "namespaces", long: "namespace", short: "n", value: "NS", doc: 'Namespace, glob ("team-*") or exclusion ("!kube-*"); repeatable.' },
  { key: "allNamespaces", long: "all-namespaces", short: "A", doc: "Watch all namespaces." },
  { key: "standalone", long: "standalone", doc: "No peering: never freeze." },
  { key: "priority", long: "priority", value: "N", doc: "Peering priority (integer)." },
  { key: "peering", long: "peering", value: "NAME", doc: "Name of the peering object." },
  { key: "liveness", long: "liveness", value: "URL", doc: 'Serve /healthz and /metrics, e.g. "http://0.0.0.0:8080/healthz".' },
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
    const spec = findFlag(typed);
    let value: string | undefined = equals >= 0 ? arg.slice(equals + 1) : undefined;
    if (spec.value === undefined) {
      if (value !== undefined) throw new UsageError(`${typed} takes no value, got ${JSON.stringify(value)}`, typed);
      (flags as Record<string, unknown>)[spec.key] = true;
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
    storeValue(flags, spec, typed, value);
  }
  if (flags.verbose && flags.quiet) throw new UsageError("--verbose and --quiet cannot be used together", "--quiet");
  return { flags, positionals };
}

function findFlag(typed: string): FlagSpec {
  const spec = typed.startsWith("--")
    ? RUN_FLAGS.find((candidate) => candidate.long === typed.slice(2))
    : RUN_FLAGS.find((candidate) => candidate.short !== undefined && candidate.short === typed.slice(1));
  if (spec) return spec;
  const known = RUN_FLAGS.flatMap((candidate) => [`--${candidate.long}`, ...(candidate.short ? [`-${candidate.short}`] : [])]);
  const suggestion = closestMatch(typed, known.filter((name) => name.startsWith("--") === typed.startsWith("--")));
  const hint = suggestion ? `; did you mean ${suggestion}?` : `; known flags: ${known.join(", ")}`;
  throw new UsageError(`unknown flag ${typed}${hint}`, typed);
}

function storeValue(flags: Partial<FlagValues>, spec: FlagSpec, typed: string, value: string): void {
  switch (spec.key) {
    case "namespaces": {
      const entries = value.split(",").map((entry) => entry.trim()).filter((entry) => entry !== "");
      if (entries.length === 0) throw new UsageError(`${typed} needs a namespace name or glob`, typed);
      flags.namespaces = [...(flags.namespaces ?? []), ...entries];
      return;
    }
    case "priority": {
      if (!/^[-+]?\d+$/.test(value)) throw new UsageError(`${typed} expects an integer, got ${JSON.stringify(value)}`, typed);
      flags.priority = Number(value);
      return;
    }
    default:
      (flags as Record<string, unknown>)[spec.key] = value;
  }
}

/** Help text for `kobun run`, one flag per line. */
export function runFlagsHelp(): string {
  const rows = RUN_FLAGS.map((spec) => {
    const names = [spec.short ? `-${spec.short}, ` : "    ", `--${spec.long}`, spec.value ? ` ${spec.value}` : ""].join("");
    return `  ${names.padEnd(30)} ${spec.doc}`;
  });
  return ["Usage: kobun run [flags] [handler files...]", "", "Flags:", ...rows].join("\n");
}
