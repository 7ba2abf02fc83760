// One source of defaults (issue 31): a kobun.yaml key's default is written in the settings
// schema (src/config/schema.ts) and nowhere else. Rooms below config/ may not import it, so
// they take the resolved value from the runtime (required options: a Reconciler's settings,
// Workers' timings, a LeaseElection's, the probe and webhook servers'). The few rooms also
// used alone, without settings (a KubeClient, a Watcher, a Backoff), keep a default for that
// use, named, and pinned here to the schema's.

import { expect, test } from "bun:test";
import { join } from "node:path";
import { SETTINGS_SCHEMA } from "../../src/config/index.ts";
import type { Node } from "../../src/config/fields.ts";
import { DEFAULT_PAGE_SIZE } from "../../src/kube/client.ts";
import { DEFAULT_REQUEST_TIMEOUT_MS } from "../../src/kube/transport.ts";
import { backoffDelay } from "../../src/util/backoff.ts";
import { defaults as WATCHER_DEFAULTS } from "../../src/watching/options.ts";
import { keysByName, scanFallbacks, scanSource, type Fallback } from "./defaults.ts";

const SRC = join(import.meta.dir, "../../src");
const WHOLE_TREE_MS = 30_000;

/** The schema's default of a key path ("watching.backoff.initial"). */
function schemaDefault(path: string): unknown {
  let node: Node = SETTINGS_SCHEMA;
  for (const part of path.split(".")) {
    if (node.kind !== "section") throw new Error(`${path}: ${part} is below a field`);
    node = (node.fields as Record<string, Node>)[part]!;
    if (node === undefined) throw new Error(`${path}: no such key in the settings schema`);
  }
  if (node.kind !== "field") throw new Error(`${path} is a section`);
  return node.default;
}

interface Listed {
  file: string;
  name: string;
  /** The value written, exactly (so another value written there is not covered). */
  value: string;
}

/** Fallbacks that look like a setting's but stand for something else. */
const NOT_SETTINGS: readonly (Listed & { why: string })[] = [
  ...["timeout", "retries", "backoff"].map((name) => ({ file: "handling/runner.ts", name, value: `defaults.${name}`, why: "the cycle's handling defaults, which reconciling/options.ts takes from the settings" })),
  ...["configurations.ts", "review.ts"].map((file) => ({ file: `admission/${file}`, name: "timeoutSeconds", value: "DEFAULT_TIMEOUT_SECONDS", why: "a webhook's own timeoutSeconds option (the API server's limit), not handling.timeout" })),
  { file: "handling/selection.ts", name: "retries", value: "0", why: "a progress record's count of retries so far" },
  { file: "kube/transport.ts", name: "retries", value: "5", why: "attempts of one HTTP request, not of a handler" },
  ...["kube/login.ts", "kube/renewal.ts"].map((file) => ({ file, name: "backoff", value: "RENEWAL_BACKOFF", why: "the credential renewal's backoff" })),
  { file: "peering/manual.ts", name: "priority", value: "100", why: "kobun freeze's priority (Kopf's 100), not this replica's peering.priority" },
  ...["background-phases.ts", "background-calls.ts"].map((file) => ({ file: `reconciling/daemons/${file}`, name: "backoff", value: "DEFAULT_BACKOFF_S", why: "a daemon's or timer's own backoff option (docs/daemons.md); handling.backoff is per-object handlers'" })),
  { file: "activities/activities.ts", name: "timeoutMs", value: "0", why: "a login activity's probe timeout" },
  { file: "testing/start.ts", name: "timeout", value: "5000", why: "the test kit's wait for a condition" },
  { file: "util/log.ts", name: "timeout", value: "5000", why: "a memory sink's wait for a log line (logs.until)" },
  { file: "util/log-repeats.ts", name: "limit", value: "5", why: "how many repeated log lines pass before they are counted" },
  { file: "util/log-repeats.ts", name: "windowMs", value: "10_000", why: "the log repeats' window" },
];

const seconds = (path: string) => (schemaDefault(path) as number) * 1000;

/** Defaults of rooms used without settings too: each must be the schema's. */
const PINNED: readonly (Listed & { actual: unknown; expected: unknown })[] = [
  { file: "kube/client.ts", name: "pageSize", value: "DEFAULT_PAGE_SIZE", actual: DEFAULT_PAGE_SIZE, expected: schemaDefault("watching.pageSize") },
  { file: "kube/transport.ts", name: "requestTimeoutMs", value: "DEFAULT_REQUEST_TIMEOUT_MS", actual: DEFAULT_REQUEST_TIMEOUT_MS, expected: seconds("kube.requestTimeout") },
  { file: "watching/watcher.ts", name: "pageSize", value: "defaults.pageSize", actual: WATCHER_DEFAULTS.pageSize, expected: schemaDefault("watching.pageSize") },
  { file: "watching/watcher.ts", name: "serverTimeoutSeconds", value: "defaults.serverTimeoutSeconds", actual: WATCHER_DEFAULTS.serverTimeoutSeconds, expected: schemaDefault("watching.serverTimeout") },
  { file: "watching/watcher.ts", name: "maxLineBytes", value: "defaults.maxLineBytes", actual: WATCHER_DEFAULTS.maxLineBytes, expected: schemaDefault("watching.lineLimit") },
  {
    file: "watching/watcher.ts", name: "backoff", value: "defaults.backoff", actual: WATCHER_DEFAULTS.backoff,
    expected: { initialMs: seconds("watching.backoff.initial"), maxMs: seconds("watching.backoff.max"), resetAfterMs: seconds("watching.reconnectHealthyAfter") },
  },
  // A Watcher's Backoff is given no factor: the Backoff's own is watching.backoff.factor's.
  { file: "util/backoff.ts", name: "factor", value: "2", actual: backoffDelay(1, { initial: 1, max: Infinity }), expected: schemaDefault("watching.backoff.factor") },
];

const listed = (found: Fallback, entry: Listed) => found.file === entry.file && found.name === entry.name && found.value === entry.value;

test("no room below config/ writes a default for a setting: only the settings schema does", () => {
  const found = scanSource(SRC, keysByName(SETTINGS_SCHEMA));
  const unlisted = found.filter((f) => ![...NOT_SETTINGS, ...PINNED].some((entry) => listed(f, entry)));
  expect(unlisted.map((f) => `src/${f.file}:${f.line}: ${f.name} ?? ${f.value} writes a default of ${f.keys.join(" or ")}; take it from the settings (the runtime passes them)`)).toEqual([]);
}, WHOLE_TREE_MS);

test("every entry of the two lists still matches a fallback in src/, so the lists only shrink", () => {
  const found = scanSource(SRC, keysByName(SETTINGS_SCHEMA));
  const stale = [...NOT_SETTINGS, ...PINNED].filter((entry) => !found.some((f) => listed(f, entry)));
  expect(stale).toEqual([]);
}, WHOLE_TREE_MS);

test("the defaults of rooms also used without settings (a KubeClient, a Watcher, a Backoff) are the schema's", () => {
  const differing = PINNED.filter((p) => !Bun.deepEquals(p.actual, p.expected)).map((p) => `src/${p.file}: ${p.name} ?? ${p.value} is ${JSON.stringify(p.actual)}, the schema's default is ${JSON.stringify(p.expected)}`);
  expect(differing).toEqual([]);
});

test("the scanner finds a default written for a setting, under its key's name or a room's spelling of it", () => {
  const keys = keysByName(SETTINGS_SCHEMA);
  const text = [
    "this.idleMs = options.idleMs ?? 10_000;", // workers.idleTimeout, spelled idleMs
    "const limit = settings?.workers.limit || 100;",
    "constructor({ requestTimeoutMs = DEFAULT_TIMEOUT }: Options) {}",
    "retries: options.retries ?? null,", // handling.retries' null is a value too
    "const x = options.pageSize;", // no fallback
    "const name = options.name ?? \"default\";", // not a number's key
  ].join("\n");
  expect(scanFallbacks("x.ts", text, keys).map((f) => [f.line, f.name, f.value, f.keys])).toEqual([
    [1, "idleMs", "10_000", ["workers.idleTimeout"]],
    [2, "limit", "100", ["workers.limit"]],
    [3, "requestTimeoutMs", "DEFAULT_TIMEOUT", ["kube.requestTimeout"]],
    [4, "retries", "null", ["handling.retries"]],
  ]);
});

test("every key of the settings schema has its default written on the key (null only where it says what null means)", () => {
  const missing: string[] = [];
  const walk = (node: Node, path: string[]) => {
    if (node.kind === "field") {
      if (node.default === undefined) missing.push(path.join("."));
    } else for (const [key, child] of Object.entries(node.fields as Record<string, Node>)) walk(child, [...path, key]);
  };
  walk(SETTINGS_SCHEMA, []);
  expect(missing).toEqual([]);
});
