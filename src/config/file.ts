// Finding and reading the config file: `kobun.yaml` in the current directory is used when
// it exists and no --config is given; an explicit file must exist. YAML syntax errors are
// reported as `file:line:col: ...`, every one of them, in a single ConfigError.
// `kobun run` looks and reads with Bun.file (findConfigFile, readConfigFile): node:fs and
// node:path, loaded by the sync forms only, cost a compiled operator ≈ 2 MB of RSS for good.

import type { LineCounter as LineCounterClass, parseDocument as ParseDocument } from "yaml";
import { ConfigError, configIssue } from "./errors.ts";

export const DEFAULT_CONFIG_FILE = "kobun.yaml";

/** The path of `kobun.yaml` in `cwd` if such a file exists, else null. */
export function defaultConfigPath(cwd: string): string | null {
  const candidate = defaultCandidate(cwd);
  const { existsSync, statSync } = process.getBuiltinModule("node:fs");
  try {
    return existsSync(candidate) && statSync(candidate).isFile() ? candidate : null;
  } catch {
    return null;
  }
}

/** defaultConfigPath without node:fs: Bun.file's exists() is true of files only. */
export async function findConfigFile(cwd: string): Promise<string | null> {
  const candidate = defaultCandidate(cwd);
  return (await Bun.file(candidate).exists()) ? candidate : null;
}

/** `cwd`'s kobun.yaml ("/" gives "/kobun.yaml": a FROM-scratch image's working directory). */
function defaultCandidate(cwd: string): string {
  return process.platform === "win32"
    ? process.getBuiltinModule("node:path").join(cwd, DEFAULT_CONFIG_FILE)
    : `${cwd.replace(/\/+$/, "")}/${DEFAULT_CONFIG_FILE}`;
}

/** Reads and parses a YAML config file; an empty file gives null. Throws ConfigError. */
export function loadConfigFile(path: string): unknown {
  let source: string;
  try {
    source = process.getBuiltinModule("node:fs").readFileSync(path, "utf8");
  } catch (error) {
    throw unreadable(path, error);
  }
  return parseConfigText(source, path);
}

/** loadConfigFile without node:fs. */
export async function readConfigFile(path: string): Promise<unknown> {
  let source: string;
  try {
    source = await Bun.file(path).text();
  } catch (error) {
    throw unreadable(path, error);
  }
  return parseConfigText(source, path);
}

function unreadable(path: string, error: unknown): ConfigError {
  const code = (error as NodeJS.ErrnoException).code;
  const reason =
    code === "ENOENT" ? "config file not found"
    : code === "EISDIR" ? "is a directory, not a config file"
    : `cannot read the config file (${code ?? String(error)})`;
  return new ConfigError([configIssue({ file: path }, reason)], { cause: error });
}

/** Parses YAML text; `file` only names it in messages. Throws ConfigError with line and column. */
export function parseConfigText(source: string, file: string): unknown {
  // `yaml` (not Bun's native parser) for its line:col errors and duplicate-key checks; loaded
  // only when a config file is actually read, so a run without one does not pay for it.
  const yaml = require("yaml") as YamlModule;
  const lineCounter = new yaml.LineCounter();
  // merge: `<<: *defaults` merges, as kubectl's YAML (YAML 1.1 merge keys) does, instead of being an unknown key "<<".
  const options = { prettyErrors: true, uniqueKeys: true, merge: true, lineCounter };
  const document = parsedValue(() => yaml.parseDocument(source, options), file);
  if (document.errors.length > 0) {
    const issues = document.errors.map((error) => {
      const position = error.linePos?.[0];
      const where = position ? `${file}:${position.line}:${position.col}` : file;
      const reason = error.message.split("\n")[0]?.replace(/ at line \d+, column \d+:?$/, "") ?? error.code;
      return { file, line: `${where}: YAML syntax error: ${reason}` };
    });
    throw new ConfigError(issues);
  }
  const data = parsedValue(() => document.toJS({ maxAliasCount: 100 }), file);
  // Values are checked only after parsing (and resource keys against the handlers later, by the runtime):
  // keep each key's line for those messages.
  if (typeof data === "object" && data !== null) {
    const lines = new Map<string, number>();
    const lineAt = (offset: number) => lineCounter.linePos(offset).line;
    collectLines(yaml, document.contents, "", lineAt, lines);
    KEY_LINES.set(data, lines);
    const resources = yaml.isMap(document.contents) ? document.contents.get("resources", true) : undefined;
    if (yaml.isMap(resources)) RESOURCE_LINES.set(data, childLines(yaml, resources, lineAt));
  }
  return data;
}

type YamlModule = typeof import("yaml") & { parseDocument: typeof ParseDocument; LineCounter: typeof LineCounterClass };

/**
 * The line of every key path ("workers.limit", "namespaces.include[1]") the document spells out. A merge key's
 * keys are not spelled out here: their path has no line, and the nearest parent's is used (lineOf).
 */
function collectLines(
  yaml: YamlModule, node: unknown, path: string, lineAt: (offset: number) => number, lines: Map<string, number>,
): void {
  if (yaml.isMap(node)) {
    for (const pair of node.items) {
      if (!yaml.isScalar(pair.key) || !pair.key.range || isMergeKey(pair.key.value)) continue;
      const child = path === "" ? String(pair.key.value) : `${path}.${String(pair.key.value)}`;
      if (!lines.has(child)) lines.set(child, lineAt(pair.key.range[0]));
      collectLines(yaml, pair.value, child, lineAt, lines);
    }
  } else if (yaml.isSeq(node)) {
    node.items.forEach((item, index) => {
      const child = `${path}[${index}]`;
      if (yaml.isNode(item) && item.range) lines.set(child, lineAt(item.range[0]));
      collectLines(yaml, item, child, lineAt, lines);
    });
  }
}

/**
 * What the parser throws (rather than lists as document errors) is a bad file too: an alias bomb
 * ("Excessive alias count"), nesting too deep for the stack. A ConfigError naming the file (exit 3),
 * not a crash with a stack trace.
 */
function parsedValue<T>(parse: () => T, file: string): T {
  try {
    return parse();
  } catch (error) {
    const reason = error instanceof Error ? error.message.split("\n")[0] : String(error);
    throw new ConfigError([configIssue({ file }, `YAML cannot be read: ${reason}`)], { cause: error });
  }
}

/** The line of each key of a mapping, as written (a resource key may hold dots: it is not split). */
function childLines(
  yaml: YamlModule, map: { items: Array<{ key: unknown }> }, lineAt: (offset: number) => number,
): Map<string, number> {
  const lines = new Map<string, number>();
  for (const pair of map.items) {
    if (yaml.isScalar(pair.key) && pair.key.range && !isMergeKey(pair.key.value)) {
      lines.set(String(pair.key.value), lineAt(pair.key.range[0]));
    }
  }
  return lines;
}

const isMergeKey = (key: unknown) => key === "<<" || (typeof key === "symbol" && key.description === "<<");

const KEY_LINES = new WeakMap<object, ReadonlyMap<string, number>>();
const RESOURCE_LINES = new WeakMap<object, ReadonlyMap<string, number>>();

/** The line of each key under `resources:` in the file `data` was parsed from (empty when not parsed from text). */
export function resourceKeyLines(data: unknown): ReadonlyMap<string, number> {
  return (typeof data === "object" && data !== null && RESOURCE_LINES.get(data)) || new Map();
}

/**
 * The line of `path` ("workers.limit", "namespaces.include[1]") in the file `data` was parsed from, else of its
 * nearest parent written there; undefined when `data` was not parsed from text or no part of the path is there.
 */
export function lineOf(data: unknown, path: string): number | undefined {
  const lines = typeof data === "object" && data !== null ? KEY_LINES.get(data) : undefined;
  let at = path;
  while (lines !== undefined) {
    const line = lines.get(at);
    if (line !== undefined) return line;
    const parent = at.replace(/(\.[^.[]*|\[\d+\])$/, "");
    if (parent === at || parent === "") return undefined;
    at = parent;
  }
  return undefined;
}
