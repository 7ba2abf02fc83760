// What the black-box reconcile tests share, written as a user of kobun would: only `kobun`,
// `kobun/testing` and `kobun/sandbox` (package.json's "exports"; the one other import is the test
// suite's /metrics parser), a Widget defined with defineResource, a registry per test, and a record
// of the reconcile's calls that a test awaits (each call wakes the waits; nothing polls).

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  conditions, defineResource, Logger, memorySink, Registry, type MemorySink, resolveSettings, run, type ReconcileContext,
  type ReconcileResult,
} from "kobun";
import { startSandbox, type Sandbox } from "kobun/sandbox";
import { startOperator, type TestOperator, type TestOperatorOptions } from "kobun/testing";
import Type from "typebox";
import { parseExposition } from "../runtime/scrape.ts";

export const Widgets = defineResource({
  group: "blackbox.kobun.dev", kind: "Widget", plural: "widgets",
  schema: {
    spec: Type.Object({ size: Type.Optional(Type.Number()), note: Type.Optional(Type.String()) }),
    status: Type.Object({
      ready: Type.Optional(Type.Boolean()), observedGeneration: Type.Optional(Type.Number()),
      children: Type.Optional(Type.Number()), conditions: Type.Optional(conditions.schema),
    }),
  },
});

/** One call of a reconcile, as the test saw it. */
export interface Call {
  name: string;
  namespace: string | undefined;
  generation: number | undefined;
  resourceVersion: string | undefined;
  labels: Record<string, string>;
  retry: number;
  deleting: boolean;
  deletionTimestamp: string | undefined;
  finalizers: string[];
  /** performance.now() at the call. */
  at: number;
}

/** The calls of a reconcile; `until` resolves once they pass a test (bounded), woken by each call. */
export class Calls {
  readonly all: Call[] = [];
  private waits = new Set<() => void>();

  /** Records a call; returns how many calls of that object came before it. */
  record(ctx: ReconcileContext<any>): number {
    const before = this.of(ctx.name).length;
    const call: Call = {
      name: ctx.name, namespace: ctx.namespace, generation: ctx.body.metadata.generation, resourceVersion: ctx.body.metadata.resourceVersion,
      labels: { ...ctx.labels }, retry: ctx.retry, deleting: ctx.deleting,
      deletionTimestamp: ctx.body.metadata.deletionTimestamp, finalizers: [...(ctx.body.metadata.finalizers ?? [])],
      at: performance.now(),
    };
    this.all.push(call);
    for (const wake of [...this.waits]) wake();
    return before;
  }

  of(name: string): Call[] {
    return this.all.filter((c) => c.name === name);
  }

  async until(test: (calls: Call[]) => boolean, what: string, timeoutMs = 15_000): Promise<Call[]> {
    if (test(this.all)) return this.all;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waits.delete(check);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; calls: ${JSON.stringify(this.all)}`));
      }, timeoutMs);
      const check = () => {
        if (!test(this.all)) return;
        clearTimeout(timer);
        this.waits.delete(check);
        resolve(this.all);
      };
      this.waits.add(check);
    });
  }
}

/** How many calls run at once, and the most there ever were (what workers.limit bounds). */
export class AtOnce {
  private running = 0;
  most = 0;

  enter(): void {
    this.most = Math.max(this.most, ++this.running);
  }

  leave(): void {
    this.running--;
  }
}

/**
 * An operator whose reconcile of Widgets, `id`, returns `results[name]` on each object's first run and nothing after,
 * retrying after 10 ms (the caller applies the objects, once it holds the operator to dispose of).
 */
export async function returning(results: Record<string, unknown>, id: string): Promise<{ calls: Calls; kit: TestOperator }> {
  const calls = new Calls();
  const registry = new Registry();
  registry.on.reconcile(Widgets, (ctx) => {
    if (calls.record(ctx) === 0) return results[ctx.name] as ReconcileResult;
  }, { id });
  return { calls, kit: await operate(registry, { reconcile: { backoff: { initial: "10ms" } } }) };
}

/** A kobun.yaml with `settings`, in .tmp/ (the kit's `flags.config` reads it). */
export function configFile(settings: object): string {
  const dir = join(import.meta.dir, "../../.tmp/reconcile-blackbox");
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `kobun-${process.pid}-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(path, JSON.stringify(settings)); // JSON is YAML
  return path;
}

/** A test operator over `registry`, with kobun.yaml `settings` if given; generous bounds for a loaded machine. */
export function operate(
  registry: Registry, settings?: object, options: TestOperatorOptions = {},
): Promise<TestOperator> {
  const flags = settings ? { config: configFile(settings), ...options.flags } : options.flags;
  return startOperator({ timeout: 15_000, logLevel: "silent", ...options, registry, flags });
}

/** An operator run() over a sandbox of its own, for what the kit hides: objects made before it starts, /metrics. */
export interface Running {
  sandbox: Sandbox;
  /** POSTs `body` to the sandbox at `path`, as admin; resolves with the object made. */
  post(path: string, body: object): Promise<any>;
  /** The probe listener's /metrics, parsed: series (with labels, as written) → value. */
  metrics(): Promise<Map<string, number>>;
  /** The operator's log lines, warnings and up. */
  logs: MemorySink;
  [Symbol.asyncDispose](): Promise<void>;
}

export const WIDGETS_PATH = "/apis/blackbox.kobun.dev/v1/namespaces/default/widgets";

/**
 * The registry's CRDs installed, `before` run (objects that exist at start-up), then `run()` with
 * kobun.yaml `settings` and probes on a free port; resolves once the operator is ready.
 */
export async function runOperator(
  registry: Registry,
  o: { settings?: object; namespaces?: string[]; before?: (post: Running["post"], sandbox: Sandbox) => Promise<void> } = {},
): Promise<Running> {
  const sandbox = await startSandbox();
  const stop = new AbortController();
  let operator: Promise<unknown> = Promise.resolve();
  const post: Running["post"] = async (path, body) => {
    const response = await fetch(`${sandbox.url}${path}`, {
      method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`);
    return response.json();
  };
  try {
    for (const crd of registry.definitions()) await post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
    await o.before?.(post, sandbox);
    const settings = resolveSettings({
      flags: {
        kubeconfig: sandbox.kubeconfigPath, namespaces: o.namespaces ?? ["default"], standalone: true,
        liveness: "http://127.0.0.1:0/healthz", ...(o.settings ? { config: configFile(o.settings) } : {}),
      },
    });
    const ready = Promise.withResolvers<string>();
    const logs = memorySink("warn");
    operator = run({
      signal: stop.signal, settings, registry, logger: new Logger(logs),
      onReady: (info) => ready.resolve(info.probeUrl!),
    });
    operator.then(() => ready.reject(new Error("the operator ended before it was ready")), ready.reject);
    const metricsUrl = (await ready.promise).replace(/\/healthz$/, "/metrics");
    return {
      sandbox, post, logs,
      metrics: async () => parseExposition(await (await fetch(metricsUrl)).text()),
      async [Symbol.asyncDispose]() {
        stop.abort();
        await operator.catch(() => {});
        await sandbox.stop();
      },
    };
  } catch (error) {
    stop.abort();
    await operator.catch(() => {});
    await sandbox.stop();
    throw error;
  }
}
