// The two ways configuration can be wrong, and the wording of what went wrong.
//
// ConfigError: a bad config file or a bad flag value. It carries every problem found
// (one per line in its message), so a user can fix the whole file in one go.
// UsageError: the command line itself is malformed (unknown flag, missing value).
// Also here: how a bad value is described ("got ..."), and the "did you mean" lookup (util's, passed on).

export { closestMatch } from "../util/index.ts";

/** One problem found in the configuration; `line` is the full human-readable sentence. */
export interface ConfigIssue {
  /** The config file the value came from, as the user named it. */
  readonly file?: string;
  /** The command-line flag the value came from, e.g. "--priority". */
  readonly flag?: string;
  /** The dotted key path, e.g. "watching.pageSize". */
  readonly path?: string;
  /** What would have been accepted, e.g. "an integer from 1 to 10000". */
  readonly expected?: string;
  /** The line of `file` the problem is at, when the file was read from text. */
  readonly fileLine?: number;
  readonly line: string;
}

/** Builds an issue whose line reads `<file or flag>: <path>: <detail>`. */
export function configIssue(
  where: { file?: string; flag?: string; path?: string; expected?: string }, detail: string,
): ConfigIssue {
  const parts: string[] = [];
  if (where.flag !== undefined) parts.push(where.flag);
  else if (where.file !== undefined) parts.push(where.file);
  if (where.path !== undefined && where.flag === undefined) parts.push(where.path);
  parts.push(detail);
  return { ...where, line: parts.join(": ") };
}

/** The issue placed at its file's line: `<file>:<line>: <path>: ...` (one from a flag or a variable is kept as is). */
export function atLine(issue: ConfigIssue, fileLine: number | undefined): ConfigIssue {
  const { file, flag, line } = issue;
  if (fileLine === undefined || flag !== undefined || file === undefined || !line.startsWith(`${file}: `)) return issue;
  return { ...issue, fileLine, line: `${file}:${fileLine}${line.slice(file.length)}` };
}

/** A bad configuration value (or several). `file`, `path`, `expected` describe the first one. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  /** What `kobun run` exits with for it (the README's "bad configuration"), as a FatalError's exitCode says. */
  readonly exitCode = 3;
  readonly file?: string;
  readonly path?: string;
  readonly expected?: string;
  readonly issues: readonly ConfigIssue[];

  constructor(issues: readonly ConfigIssue[], options?: { cause?: unknown }) {
    super(issues.map((issue) => issue.line).join("\n"), options);
    this.issues = Object.freeze([...issues]);
    const first = issues[0];
    this.file = first?.file;
    this.path = first?.path;
    this.expected = first?.expected;
  }
}

/** A malformed command line: unknown flag, missing or bad flag value. */
export class UsageError extends Error {
  override readonly name = "UsageError";
  constructor(
    message: string,
    /** The flag as the user typed it, when one is to blame. */
    readonly flag?: string,
  ) {
    super(message);
  }
}

/** Describes a value the way an error message shows what it "got". */
export function describeValue(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "string") {
    const shown = value.length > 60 ? `${value.slice(0, 57)}...` : value;
    return JSON.stringify(shown);
  }
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value)) return "a list";
  if (value instanceof Date) return `a date (${value.toISOString()})`;
  if (typeof value === "object") return "a mapping";
  return typeof value;
}
