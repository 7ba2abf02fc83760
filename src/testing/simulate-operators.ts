// The operator of one simulated run: one instance at a time, each a fresh `run()` (no state kept
// from the one before: a new process) with its own identity on the API server (kubeconfig `as:`,
// the Impersonate-User header), so that killing it is faithful: the sandbox cuts that identity
// off at once (client-faults.ts) and the dead instance can write nothing more, while the next one
// starts against the same cluster. And the activity the virtual clock does not see, which a run's
// settling watches beside it.

import type { Sandbox } from "@kobun/sandbox";
import { resolveSettings } from "../config/index.ts";
import type { Registry } from "../declaring/index.ts";
import { KubeClient } from "../kube/index.ts";
import { run, type StartedInfo } from "../runtime/index.ts";
import { clock, Logger, type MemorySink } from "../util/index.ts";
import { instanceSink, LastCalls } from "./simulate-calls.ts";

/** the identity prefix of every operator instance (what the sandbox's write faults match) */
export const INSTANCE_PREFIX = "kobun-simulated-operator-";

/** the lease holder identity of every operator instance (lease mode) */
const SIMULATED_PEER = "kobun-simulated-operator";

/** whether the test's config runs the operator in lease mode (peering.mode: lease) */
export function leaseMode(config: Record<string, unknown> | undefined): boolean {
  const peering = config?.peering as Record<string, unknown> | undefined;
  return peering?.mode === "lease" && peering.standalone !== true;
}

/** the Lease's name in lease mode (peering.name; the settings schema's default when none is given) */
export function leaseName(config: Record<string, unknown> | undefined): string {
  return resolveSettings({ fileData: config ?? {} }).peering.name;
}

/** no grace on stop: a killed instance is gone at once */
const SIMULATION_SETTINGS = { shutdown: { gracePeriod: 0 } };

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
  /** the operator's `memo`, made or copied afresh for each instance */
  memo?: Record<string, unknown> | (() => Record<string, unknown>);
  /** each instance's request deadline (real ms; the client's default otherwise) */
  requestTimeoutMs?: number;
}

interface Instance {
  id: string;
  stop: AbortController;
  running: Promise<unknown>;
  client: KubeClient;
  /** watch lines it has read (its kobun_watch_events_total), once started */
  received: () => number;
  /** every watch of it has listed (run's onReady) */
  listed: boolean;
}

export class Operators {
  private readonly instances: Instance[] = [];
  private starting: Promise<void> = Promise.resolve();
  /** set by stopAll: a write's kill() after it starts nothing more */
  private stopping = false;
  /** an instance that ended on its own (not killed): the run fails with it */
  failure: Error | undefined;
  /** aborted with `failure` */
  readonly failed = new AbortController();
  /** the live instance's last call of each handler and reconcile, per object */
  calls = new LastCalls();

  constructor(private readonly parts: OperatorsParts) {}

  /** the identity of the live instance */
  get current(): string {
    return this.instances.at(-1)?.id ?? "";
  }

  get count(): number {
    return this.instances.length;
  }

  /**
   * The watch lines the live instance has read (what the sandbox sent it and it has not read yet is
   * on its way: work neither the clock nor the activity count sees)
   */
  received(): number {
    return this.instances.at(-1)?.received() ?? 0;
  }

  /** resolves once the latest instance started is launched (it may still be starting up and listing: `listing()`) */
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
    if (!this.stopping) void this.start();
  }

  /** stops every instance; an instance that does not end within `ms` is left (its client is cut off) */
  async stopAll(ms = 5000): Promise<void> {
    this.stopping = true;
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

  /**
   * An instance being launched is work on the virtual clock; once launched, its start-up (which
   * may wait on handler time: a startup handler's sleep) and first LISTs are told by `listing()`.
   */
  private async startOne(): Promise<void> {
    const starting = clock().working();
    try {
      await this.startInstance();
    } finally {
      starting();
    }
  }

  /**
   * Whether the live instance has not started and listed every resource yet: the streams it opens
   * are no requests the clock counts, so until their first lines come a settle must not take it for
   * quiet (unless a timer is pending, which it may be waiting for).
   */
  listing(): boolean {
    const live = this.instances.at(-1);
    return live !== undefined && !live.listed;
  }

  private failWith(error: Error): void {
    if (this.failure !== undefined) return;
    this.failure = error;
    this.failed.abort(error);
  }

  private async startInstance(): Promise<void> {
    const { sandbox, registry, namespace } = this.parts;
    const id = `${INSTANCE_PREFIX}${this.instances.length + 1}`;
    const deadline = this.parts.requestTimeoutMs ? { requestTimeoutMs: this.parts.requestTimeoutMs } : {};
    const client = await KubeClient.connect({ kubeconfigText: instanceKubeconfig(sandbox.url, id), ...deadline });
    const settings = resolveSettings({
      fileData: {
        ...this.parts.config, ...SIMULATION_SETTINGS,
        workers: underOwn({ batchWindow: 0 }, this.parts.config?.workers),
        handling: underOwn({ backoff: 1 }, this.parts.config?.handling),
      },
      // lease mode (the test's config asks) competes for a Lease in the run's namespace; else no peering at all
      flags: { namespaces: [namespace], ...(leaseMode(this.parts.config) ? {} : { standalone: true }) },
    });
    const stop = new AbortController();
    this.calls = new LastCalls(); // a new process: what the one before failed on is not this one's
    const label = `[${id.slice(INSTANCE_PREFIX.length)}] `;
    const logger = new Logger(instanceSink({ ...this.parts, calls: this.calls }, label, stop.signal));
    let events: { lines(openMetrics: boolean): string[] } | undefined;
    const onStarted = (info: StartedInfo) => {
      events = info.health.metrics.get("kobun_watch_events_total");
    };
    const received = () => sumOf(events?.lines(false) ?? []);
    const onReady = () => {
      instance.listed = true;
    };
    const memo = memoOf(this.parts.memo);
    // one peer id for every instance: a restarted one renews the Lease its killed predecessor held (as a pod
    // restarted under its name does) instead of waiting out its duration in real time
    const peerId = SIMULATED_PEER;
    const running = run({ signal: stop.signal, settings, registry, logger, client, memo, onStarted, onReady, peerId });
    const ended = running.then(() => {
      if (!stop.signal.aborted) this.failWith(new Error(`operator instance ${id} ended by itself`));
    }, (error: unknown) => {
      if (!stop.signal.aborted) this.failWith(error instanceof Error ? error : new Error(String(error)));
    });
    const instance: Instance = { id, stop, running: ended, client, received, listed: false };
    this.instances.push(instance);
  }
}

/** the sum of a counter's samples (`name{labels} value` lines) */
function sumOf(samples: string[]): number {
  let sum = 0;
  for (const sample of samples) sum += Number(sample.slice(sample.lastIndexOf(" ") + 1));
  return sum;
}

/**
 * The simulation's defaults of a settings section, under the test's own `config`: no batch window
 * (a window is real time, so what it merges would depend on the machine's speed, not the seed;
 * merged events are the `merge` fault's, on cue), and a handler retried after 1 s of virtual time
 * (kobun's 60 s would fall outside a settle's horizon: the retry would wait for the next step).
 */
function underOwn(defaults: Record<string, unknown>, own: unknown): Record<string, unknown> {
  return { ...defaults, ...(own && typeof own === "object" ? own : {}) };
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
 * What happens that the virtual clock does not count as work: a write by anyone, an operator
 * request or log line, merged events let through. A settle is quiet only while this count stands
 * still (advance.ts), so the watch events a write causes are waited for too.
 */
export class QuietWatch {
  private seen = 0;
  private waiters: (() => void)[] = [];

  activity(): void {
    this.seen++;
    if (this.waiters.length > 0) for (const wake of this.waiters.splice(0)) wake();
  }

  count(): number {
    return this.seen;
  }

  /** resolves at the next activity */
  next(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}

/** each instance's memo: a new process starts with the embedding program's state made again */
function memoOf(memo: OperatorsParts["memo"]): Record<string, unknown> {
  if (memo === undefined) return {};
  return typeof memo === "function" ? memo() : { ...memo };
}
