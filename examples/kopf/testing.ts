// The test helpers of the ports of Kopf's examples: an operator with one example's handlers
// (a registry of its own: `bun test` runs every file in one process) and the CRD beside this
// file, and a wait for Kubernetes Events (their names are generated, so `kit.until` cannot
// name them).

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Logger, resolveSettings, run, type MemorySink, type Registry, type Toggle } from "kobun";
import { startSandbox, type Sandbox, type SandboxOptions } from "kobun/sandbox";
import { startOperator, type TestOperator, type TestOperatorOptions } from "kobun/testing";
import YAML from "yaml";

type Flags = NonNullable<NonNullable<Parameters<typeof resolveSettings>[0]>["flags"]>;

export const CRD = join(import.meta.dir, "crd.yaml");

/** The example's handlers against a fresh sandbox, with crd.yaml installed. */
export function startExample(registry: Registry, options: TestOperatorOptions = {}): Promise<TestOperator> {
  return startOperator({ registry, crds: [CRD], logLevel: "silent", timeout: 10_000, ...options });
}

export interface KubeEvent {
  type: string;
  reason: string;
  message: string;
  count?: number;
  involvedObject: { kind?: string; name?: string; uid?: string };
}

/**
 * The Events of the namespace once `done(events)` holds. Each look is a LIST; between looks it
 * waits for the sandbox's next write to an Event, registered before the look (so none is missed).
 */
export async function eventsUntil(
  kit: TestOperator, done: (events: KubeEvent[]) => boolean, timeout = 10_000,
): Promise<KubeEvent[]> {
  const events = await kit.client.resolve("v1/events");
  const deadline = performance.now() + timeout;
  for (;;) {
    const left = Math.max(1, deadline - performance.now());
    const next = kit.sandbox.waitFor((r) => r.plural === "events" && r.verb !== "list" && r.verb !== "watch", left);
    next.catch(() => {});
    const list = await kit.client.list(events, { namespace: kit.namespace });
    const items = list.items as unknown as KubeEvent[];
    if (done(items)) return items;
    if (performance.now() >= deadline) {
      throw new Error(`events: not there after ${timeout} ms; seen: ${JSON.stringify(items.map((e) => e.message))}`);
    }
    await next.catch(() => {});
  }
}

/** Whether one Event has this message (and, when given, this type). */
export function hasEvent(events: KubeEvent[], message: string, type?: string): boolean {
  return events.some((e) => e.message === message && (type === undefined || e.type === type));
}

/**
 * A sandbox (started with `options`) with crd.yaml (and the CRD files `more`) installed, for the examples that run the operator more than once
 * against the same API server (a restart, two peers, an embedding), where `startOperator`
 * (one sandbox per operator) does not fit.
 */
export async function sandboxWithCrd(more: string[] = [], options: SandboxOptions = {}): Promise<Sandbox> {
  const sandbox = await startSandbox(options);
  for (const file of [CRD, ...more]) {
    for (const crd of YAML.parseAllDocuments(readFileSync(file, "utf8")).map((d) => d.toJS())) {
      if (crd) await request(sandbox, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
    }
  }
  return sandbox;
}

/** A running operator of `run()`; `stop()` resolves once it ended (and rejects if it failed). */
export interface Running {
  stop(): Promise<void>;
  /** The /healthz URL, when the flags asked for a probe listener (`liveness`). */
  probeUrl?: string;
}

/** What `runOperator` passes to `run()` besides the sandbox and the handlers. */
export interface RunExtras {
  flags?: Partial<Flags>;
  /** What a kobun.yaml would say (the flags win over it). */
  config?: Record<string, unknown>;
  toggle?: Toggle;
  /** Two operators in one process need ids of their own: the default id is per process. */
  peerId?: string;
  /** Where the operator's log goes (kobun's `memorySink`, for a test to read); default: stderr, as the flags say. */
  logs?: MemorySink;
}

/** `run()` against the sandbox, watching "default"; resolves once its watches started. */
export async function runOperator(sandbox: Sandbox, registry: Registry, extras: RunExtras = {}): Promise<Running> {
  const { flags = {}, toggle, peerId, config, logs } = extras;
  const settings = resolveSettings({
    ...(config ? { fileData: config } : {}),
    flags: { kubeconfig: sandbox.kubeconfigPath, namespaces: ["default"], standalone: true, quiet: !flags.verbose, ...flags },
  });
  const stop = new AbortController();
  const started = Promise.withResolvers<string | undefined>();
  const running = run({
    signal: stop.signal, settings, registry, ...(toggle ? { toggle } : {}), ...(peerId ? { peerId } : {}),
    ...(logs ? { logger: new Logger(logs) } : {}),
    onStarted: ({ probeUrl }) => started.resolve(probeUrl),
  });
  const ended = running.then(() => { throw new Error("the operator ended before it started"); });
  const probeUrl = await Promise.race([started.promise, ended]);
  return { stop: async () => { stop.abort(); await running; }, ...(probeUrl ? { probeUrl } : {}) };
}

/** Resolves once `toggle` is frozen (`frozen: true`) or running, at once if it is already; bounded. */
export function untilToggle(toggle: Toggle, frozen: boolean, timeout = 10_000): Promise<void> {
  if (toggle.frozen === frozen) return Promise.resolve();
  const { promise, resolve, reject } = Promise.withResolvers<void>();
  const timer = setTimeout(() => {
    off();
    reject(new Error(`the operator did not become ${frozen ? "frozen" : "active"} within ${timeout} ms`));
  }, timeout);
  const off = toggle.onChange((now) => {
    if (now !== frozen) return;
    clearTimeout(timer);
    off();
    resolve();
  });
  return promise;
}

/** A request to the sandbox as an admin (its loopback API needs no credentials); returns the JSON body. */
export async function request(sandbox: Sandbox, method: string, path: string, body?: unknown): Promise<any> {
  const contentType = method === "PATCH" ? "application/merge-patch+json" : "application/json";
  const response = await fetch(`${sandbox.url}${path}`, {
    method, headers: { "content-type": contentType }, body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${path}: HTTP ${response.status} ${await response.text()}`);
  return response.json();
}

/** The path of KopfExamples in "default" (and of one, by name). */
export function examplesPath(name?: string): string {
  return `/apis/kopf.dev/v1/namespaces/default/kopfexamples${name ? `/${name}` : ""}`;
}

/** `message` as a pattern matching a plain log line that says exactly it (at any level, before its fields). */
export function logLine(message: string): RegExp {
  return new RegExp(`^\\S+ (DEBUG|INFO |WARN |ERROR) ${RegExp.escape(message)}( |$)`);
}

/** A plain log line's message: after its time and level, before its fields (` key=value`). */
export function logMessage(line: string): string {
  return line.replace(/^\S+ \S+ +/, "").replace(/ [\w.-]+=.*$/, "");
}

/** When a plain log line was written (its leading time), in ms since the epoch. */
export function logTime(line: string): number {
  return Date.parse(line.slice(0, line.indexOf(" ")));
}

/** The lines of `logs` that say exactly `message` (with any fields). */
export function logged(logs: { readonly lines: readonly string[] }, message: string): string[] {
  const pattern = logLine(message);
  return logs.lines.filter((line) => pattern.test(line));
}

/**
 * Resolves once `times` lines of `logs` match `pattern`. `logs.until` resolves on the first match: this
 * pattern matches only the `times`-th line it is shown (until shows it each line once, oldest first).
 */
export function loggedTimes(logs: MemorySink, pattern: RegExp, times: number, timeout?: number): Promise<string> {
  let seen = 0;
  const nth = new (class extends RegExp {
    override test(line: string): boolean {
      return pattern.test(line) && ++seen >= times;
    }
  })(pattern.source, pattern.flags);
  return logs.until(nth, timeout === undefined ? {} : { timeout });
}

/** One line of a JSON log (`memorySink(level, "json")`): its message, level and fields. */
export interface LogRecord { msg: string; level: string; [field: string]: unknown }

/** A pattern matching a JSON log line whose message is exactly `message` (for `logs.until`). */
export function jsonLine(message: string): RegExp {
  return new RegExp(`"msg":${RegExp.escape(JSON.stringify(message))}[,}]`);
}

/** The records of a JSON log's lines, oldest first. */
export function records(logs: { readonly lines: readonly string[] }): LogRecord[] {
  return logs.lines.map((line) => JSON.parse(line) as LogRecord);
}
