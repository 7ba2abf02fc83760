// The operator of one simulated run: one instance at a time, each a fresh `run()` (no state kept
// from the one before: a new process) with its own identity on the API server (kubeconfig `as:`,
// the Impersonate-User header), so that killing it is faithful: the sandbox cuts that identity
// off at once (client-faults.ts) and the dead instance can write nothing more, while the next one
// starts against the same cluster. And the quiet detector a run settles on.

import type { Sandbox } from "@kobun/sandbox";
import { resolveSettings } from "../config/index.ts";
import type { Registry } from "../declaring/index.ts";
import { KubeClient } from "../kube/index.ts";
import { run } from "../runtime/index.ts";
import { Logger, memorySink, type LogLevel, type LogSink, type MemorySink } from "../util/index.ts";

/** the identity prefix of every operator instance (what the sandbox's write faults match) */
export const INSTANCE_PREFIX = "kobun-simulated-operator-";

/** handler retries fast, no grace on stop: a simulated run waits for nothing the scenario did not ask for */
const SIMULATION_SETTINGS = { handling: { backoff: 0.05 }, shutdown: { gracePeriod: 0 } };

export interface OperatorsParts {
  sandbox: Sandbox;
  registry: Registry;
  namespace: string;
  /** every log line of every instance, from info (the run's story reads them) */
  logs: MemorySink;
  /** told of each line of any instance, debug ones too: the operator is busy */
  onActivity: () => void;
  /** more settings, as a config file's data (merged under the simulation's own) */
  config?: Record<string, unknown>;
}

interface Instance { id: string; stop: AbortController; running: Promise<unknown>; client: KubeClient }

export class Operators {
  private readonly instances: Instance[] = [];
  private starting: Promise<void> = Promise.resolve();
  /** an instance that ended on its own (not killed): the run fails with it */
  failure: Error | undefined;

  constructor(private readonly parts: OperatorsParts) {}

  /** the identity of the live instance */
  get current(): string {
    return this.instances.at(-1)?.id ?? "";
  }

  get count(): number {
    return this.instances.length;
  }

  /** resolves once the latest instance started has its watches started */
  get ready(): Promise<void> {
    return this.starting;
  }

  start(): Promise<void> {
    this.starting = this.starting.then(() => this.startOne());
    return this.starting;
  }

  /**
   * Kills the live instance now: the sandbox refuses it from this moment (call this synchronously
   * from the write that is its last); its run is aborted and left to end, and a fresh one starts.
   */
  kill(): void {
    const dead = this.instances.at(-1);
    if (dead === undefined) return;
    this.parts.sandbox.faults.clients.cutOff(dead.id);
    dead.stop.abort(new DOMException("killed by the simulation", "AbortError"));
    void this.start();
  }

  /** stops every instance; an instance that does not end within `ms` is left (its client is cut off) */
  async stopAll(ms = 5000): Promise<void> {
    await this.starting.catch(() => {});
    for (const instance of this.instances) {
      this.parts.sandbox.faults.clients.cutOff(instance.id);
      instance.stop.abort(new DOMException("the simulated run ends", "AbortError"));
    }
    const ended = Promise.allSettled(this.instances.map((instance) => instance.running));
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([ended, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
    clearTimeout(timer);
    for (const instance of this.instances) instance.client.close();
  }

  private async startOne(): Promise<void> {
    const { sandbox, registry, namespace } = this.parts;
    const id = `${INSTANCE_PREFIX}${this.instances.length + 1}`;
    const client = await KubeClient.connect({ kubeconfigText: instanceKubeconfig(sandbox.url, id) });
    const settings = resolveSettings({
      fileData: { ...this.parts.config, ...SIMULATION_SETTINGS },
      flags: { namespaces: [namespace], standalone: true },
    });
    const stop = new AbortController();
    let started!: () => void;
    const ready = new Promise<void>((resolve) => (started = resolve));
    const logger = new Logger(activitySink(this.parts.logs, this.parts.onActivity, id, stop.signal));
    const onStarted = () => started();
    const running = run({ signal: stop.signal, settings, registry, logger, client, memo: {}, onStarted }).then(() => {
      if (!stop.signal.aborted) this.failure ??= new Error(`operator instance ${id} ended by itself`);
    }, (error: unknown) => {
      if (!stop.signal.aborted) this.failure ??= error instanceof Error ? error : new Error(String(error));
    });
    this.instances.push({ id, stop, running, client });
    await Promise.race([ready, running]);
  }
}

/** a kubeconfig of the sandbox (open: no token) whose requests say who they are (Impersonate-User) */
function instanceKubeconfig(url: string, id: string): string {
  return [
    "apiVersion: v1", "kind: Config", "current-context: sandbox",
    "clusters: [{ name: sandbox, cluster: { server: \"" + url + "\" } }]",
    `users: [{ name: operator, user: { as: "${id}" } }]`,
    "contexts: [{ name: sandbox, context: { cluster: sandbox, user: operator, namespace: default } }]",
  ].join("\n");
}

/**
 * every line (debug too) marks activity; from info, lines are kept, each prefixed with its instance.
 * A killed instance's code may still run a while in this process: what it logs after `dead` is dropped.
 */
function activitySink(logs: MemorySink, onActivity: () => void, id: string, dead: AbortSignal): LogSink {
  const keep: Record<LogLevel, boolean> = { debug: false, info: true, warn: true, error: true };
  const label = `[${id.slice(INSTANCE_PREFIX.length)}] `;
  return {
    level: "debug", format: "plain",
    write(line, level) {
      if (dead.aborted) return;
      onActivity();
      if (keep[level]) logs.write(label + line, level);
    },
  };
}

/**
 * Resolves once nothing has happened for `quietMs` (no write by anyone, no operator log line, no
 * watch event held back by a delay): the operator has done what it will do. The seam for a
 * virtual clock: `now` and `wait` are the only reads of time.
 */
export class QuietWatch {
  private last = performance.now();

  constructor(
    private readonly busy: () => boolean,
    private readonly now: () => number = () => performance.now(),
    private readonly wait: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
  ) {}

  activity(): void {
    this.last = Math.max(this.last, this.now());
  }



  /** rejects after `timeoutMs` of activity without such a pause */
  async settle(quietMs: number, timeoutMs: number): Promise<void> {
    const start = this.now();
    for (;;) {
      const idle = this.now() - this.last;
      // what is held back counts as happening now: once it arrives, the operator needs its quiet period to act
      if (this.busy()) this.activity();
      else if (idle >= quietMs) return;
      if (this.now() - start > timeoutMs) {
        throw new Error(`the operator never went quiet for ${quietMs} ms within ${timeoutMs} ms`);
      }
      await this.wait(Math.max(5, quietMs - idle));
    }
  }
}
