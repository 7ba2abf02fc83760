// The `resources:` section: per handled resource (keyed by the selector its handlers were
// registered with, its alias, or a kubectl form of its name: resource-keys.ts), where and how it
// is watched and handled. Only the keys given are
// kept: an absent one inherits the global setting. Whether a key names a registered resource is
// checked by the runtime (config does not know the handlers), with the line kept here.

import { formatDuration } from "./duration.ts";
import { closestMatch, configIssue, describeValue, type ConfigIssue } from "./errors.ts";
import { flag, oneOf, section, text, textList, type Node, type Section } from "./fields.ts";
import { excludedEntry, namespaceEntry, SETTINGS_SCHEMA } from "./schema.ts";
import { fieldSelectorProblem, labelSelectorProblem } from "./selectors.ts";

const GLOBAL = SETTINGS_SCHEMA.fields;

export const RESOURCE_ENTRY = section("One handled resource.", {
  namespaces: section("Where to watch this resource, instead of the global namespaces (either key given replaces " +
    "both; only exclude: the whole cluster minus those). Needs one peering for the cluster (peering.clusterwide, " +
    "mode lease, or standalone); kobun manifests grants it there.", {
    include: textList({
      default: [], doc: 'Names or globs ("team-*"); entries starting with "!" exclude.',
      expected: "a list of namespace names or globs", entry: namespaceEntry,
    }),
    exclude: textList({
      default: [], doc: "Names or globs never watched for this resource.",
      expected: "a list of namespace names or globs", entry: excludedEntry,
    }),
  }),
  clusterScoped: flag({
    default: false, doc: "Asserts the resource's scope: checked against discovery at start-up (absent: not checked).",
  }),
  labelSelector: text({
    default: "", doc: 'Sent with every LIST and WATCH, so the API server filters: "app=web,tier in (a,b)".',
  }),
  fieldSelector: text({
    default: "", doc: 'Sent with every LIST and WATCH: "metadata.name!=skip,status.phase=Running".',
  }),
  version: text({
    default: "",
    doc: "Serve this version of the resource's group and kind instead of the preferred one " +
      "(checked against discovery); only for handlers whose selector names no version (a typed token names one).",
    expected: 'an API version like "v1" or "v1beta1"',
    valid: (value) => /^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$/.test(value),
  }),
  enabled: flag({
    default: true, doc: "false: none of this resource's handlers run in this deployment (it is not watched).",
  }),
  workers: section("Workers for this resource (absent keys: the global workers).", {
    limit: GLOBAL.workers.fields.limit,
    batchWindow: GLOBAL.workers.fields.batchWindow,
  }),
  handling: section("Handler defaults for this resource " +
    "(absent keys: the global handling; each handler may still override).", {
    retries: GLOBAL.handling.fields.retries,
    backoff: GLOBAL.handling.fields.backoff,
    timeout: GLOBAL.handling.fields.timeout,
  }),
  reconcile: section("on.reconcile's backoff for this resource (absent keys: the global reconcile.backoff).", {
    backoff: section("The backoff of a failing reconcile, per object.", {
      initial: GLOBAL.reconcile.fields.backoff.fields.initial,
      max: GLOBAL.reconcile.fields.backoff.fields.max,
    }),
  }),
  metadataOnly: flag({
    default: false,
    doc: "true: watch as PartialObjectMetadata (only metadata is received: less memory and bandwidth; handlers " +
      "reading ctx.spec or ctx.status get an error; progress is kept in annotations). Absent: metadata-only when " +
      "every handler of the resource declares it (resource(selector, { metadataOnly: true })); false: always in full.",
  }),
  storage: oneOf(["auto", "status", "annotations"], {
    default: "auto",
    doc: 'Where progress and the diff base are kept: "status" (status.kobun; needs a status subresource), ' +
      '"annotations" (kobun.dev/ annotations), or "auto": status when the resource has a status subresource, ' +
      "else annotations.",
  }),
});

/** One resource's settings: only what the file gave (absent = inherit the global setting). */
export interface ResourceSettings {
  /** The key as written: a registered selector (or alias). */
  readonly key: string;
  /** The config file it came from, and the key's line in it when it was read from text. */
  readonly file: string;
  readonly line?: number;
  readonly namespaces?: { readonly include?: readonly string[]; readonly exclude?: readonly string[] };
  readonly clusterScoped?: boolean;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly version?: string;
  readonly enabled: boolean;
  readonly workers?: { readonly limit?: number; readonly batchWindow?: number };
  readonly handling?: {
    readonly retries?: number | null; readonly backoff?: number; readonly timeout?: number | null;
  };
  readonly reconcile?: { readonly backoff?: { readonly initial?: number; readonly max?: number } };
  /** Absent: as the handlers declare (resource(selector, { metadataOnly: true })). */
  readonly metadataOnly?: boolean;
  readonly storage: "auto" | "status" | "annotations";
}

type Tree = Record<string, unknown>;
const isMapping = (value: unknown): value is Tree =>
  typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Date);

/** Reads `resources:`; every problem goes to `issues`. Only keys given are kept (but enabled and storage always). */
export function readResources(
  raw: unknown, file: string, lines: ReadonlyMap<string, number>, issues: ConfigIssue[],
): Record<string, ResourceSettings> {
  const result: Record<string, ResourceSettings> = {};
  if (raw === undefined || raw === null) return result;
  if (!isMapping(raw)) {
    issues.push(configIssue(
      { file, path: "resources", expected: "a mapping" },
      "expected a mapping of resource selectors (like kobunexamples.kobun.dev) to their settings; " +
        `got ${describeValue(raw)}`,
    ));
    return result;
  }
  for (const [key, entry] of Object.entries(raw)) {
    const line = lines.get(key);
    const path = `resources.${key}`;
    // Problems name `file`; resolveSettings places each at its key's own line.
    const read = readGiven(RESOURCE_ENTRY, entry ?? {}, path, file, issues);
    checkSelector(read, "labelSelector", labelSelectorProblem, path, file, issues);
    checkSelector(read, "fieldSelector", fieldSelectorProblem, path, file, issues);
    const at = line !== undefined ? { line } : {};
    result[key] = { key, file, ...at, enabled: true, storage: "auto", ...read } as ResourceSettings;
  }
  return result;
}

/**
 * A resource's reconcile backoff, its own keys over the global ones, starts at most at its max: an
 * initial wait above it is never waited (each wait is capped at max), so it is refused, naming the
 * key the resource gave (run after flags and env, which may set the global one).
 */
export function checkResourceBackoffs(
  resources: Record<string, ResourceSettings>, global: { readonly initial: number; readonly max: number },
  issues: ConfigIssue[],
): void {
  const failed = new Set(issues.map((issue) => issue.path));
  for (const entry of Object.values(resources)) {
    const own = entry.reconcile?.backoff;
    if (own === undefined) continue;
    const at = `resources.${entry.key}.reconcile.backoff`;
    if (failed.has(`${at}.initial`) || failed.has(`${at}.max`)) continue;
    const [initial, max] = [own.initial ?? global.initial, own.max ?? global.max];
    if (initial <= max) continue;
    const maxPath = own.max !== undefined ? `${at}.max` : "reconcile.backoff.max";
    const [path, expected] = own.initial !== undefined
      ? [`${at}.initial`, `at most ${maxPath} (${formatDuration(max)})`]
      : [`${at}.max`, `at least reconcile.backoff.initial (${formatDuration(initial)})`];
    const message = `expected ${expected}, got ${formatDuration(own.initial ?? max)}`;
    issues.push(configIssue({ file: entry.file, path, expected }, message));
  }
}

function checkSelector(
  read: Tree, key: string, problem: (selector: string) => string | undefined, path: string, file: string,
  issues: ConfigIssue[],
): void {
  const value = read[key];
  if (typeof value !== "string") return;
  const found = problem(value);
  if (!found) return;
  const expected = `a ${key === "labelSelector" ? "label" : "field"} selector`;
  issues.push(configIssue(
    { file, path: `${path}.${key}`, expected }, `cannot parse the selector ${describeValue(value)}: ${found}`,
  ));
}

/** The given keys of a section, read and checked; unknown keys and bad values go to `issues`. */
function readGiven(
  node: Section<Record<string, Node>>, raw: unknown, path: string, file: string, issues: ConfigIssue[],
): Tree {
  const keys = Object.keys(node.fields);
  if (!isMapping(raw)) {
    issues.push(configIssue(
      { file, path, expected: "a mapping" },
      `expected a mapping with keys ${keys.join(", ")}; got ${describeValue(raw)}`,
    ));
    return {};
  }
  const result: Tree = {};
  for (const [key, value] of Object.entries(raw)) {
    const child = node.fields[key];
    const childPath = `${path}.${key}`;
    if (child === undefined) {
      const suggestion = closestMatch(key, keys);
      const hint = suggestion ? `; did you mean "${suggestion}"?` : "";
      issues.push(configIssue({ file, path: childPath }, `unknown key${hint} (allowed here: ${keys.join(", ")})`));
    } else if (child.kind === "section") {
      result[key] = readGiven(child, value, childPath, file, issues);
    } else {
      const read = child.read(value);
      if (read.ok) {
        result[key] = read.value;
      } else {
        issues.push(configIssue(
          { file, path: childPath + (read.at?.suffix ?? ""), expected: read.expected },
          `expected ${read.expected}, got ${describeValue(read.at ? read.at.got : value)}`,
        ));
      }
    }
  }
  return result;
}

/** The example entry in kobun.example.yaml: every key, commented out, with its documentation. */
export function renderResourcesExample(lines: string[]): void {
  lines.push(
    "# Resources: per handled resource, keyed by the selector its handlers are registered with, by the alias",
    '# a handler module gives it (resource("kobunexamples.kobun.dev", { alias: "examples" })), or by any form',
    "# kubectl reads (kobunexamples.kobun.dev, KobunExample, jobs.v1.batch) naming exactly one of them; any",
    "# other key is an error at start-up. Absent keys inherit the global settings. For example:",
  );
  lines.push("resources: {}");
  lines.push("#  kobunexamples.kobun.dev:");
  renderEntry(RESOURCE_ENTRY, 2, lines);
}

const EXAMPLE_VALUES: Record<string, string> = {
  labelSelector: '"app=web,tier in (frontend,backend)"', fieldSelector: '"metadata.name!=skip-me"', version: "v1beta1",
  include: '["team-*"]', exclude: '["team-legacy"]',
};

function renderEntry(node: Section<Record<string, Node>>, depth: number, lines: string[]): void {
  const indent = `#${"  ".repeat(depth)}`;
  for (const [key, child] of Object.entries(node.fields)) {
    lines.push(`${indent}# ${child.doc}`);
    if (child.kind === "section") {
      lines.push(`${indent}${key}:`);
      renderEntry(child, depth + 1, lines);
    } else {
      lines.push(`${indent}${key}: ${EXAMPLE_VALUES[key] ?? child.toYaml(child.default)}`);
    }
  }
}

/** The entries as kobun.yaml says them (without where they were read), e.g. to carry them into a ConfigMap. */
export function resourcesAsYaml(
  resources: Readonly<Record<string, ResourceSettings>>,
): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const [key, { key: _key, file: _file, line: _line, ...given }] of Object.entries(resources)) out[key] = given;
  return out;
}
