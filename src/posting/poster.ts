// posting/: Kubernetes Events about handled objects (handler successes, retries, failures),
// posted in the background. `post()` only appends to a bounded queue and never blocks or
// throws; a task started in the operator's scope sends them (a few at a time) to core v1
// `events` in the object's namespace; `flush(signal)` drains the queue at shutdown.
// Must never post about Event objects (that would feed itself), never retry forever, never
// hold a handler up, and never import handling/.

import type { KubeClient } from "../kube/client.ts";
import type { KubeObject, Resource } from "../kube/types.ts";
import { silentLogger, type Logger, type LogLevel } from "../util/log.ts";
import type { TaskScope } from "../util/scope.ts";

export type EventType = "Normal" | "Warning";

export interface PosterOptions {
  client: Pick<KubeClient, "create">;
  logger?: Logger;
  /** Default true. */
  enabled?: boolean;
  /** The least severe level posted: Normal events are "info", Warning ones "warn"/"error". Default "info". */
  level?: LogLevel;
  /** Most queued events; older ones are dropped beyond it. Default 1000. */
  capacity?: number;
  /** Events sent concurrently. Default 8. */
  concurrency?: number;
  /** The `source.component` / `reportingController`. Default "kobun". */
  component?: string;
}

interface Pending {
  object: KubeObject;
  type: EventType;
  reason: string;
  message: string;
  at: string;
}

const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };
const EVENTS: Resource = { group: "", version: "v1", plural: "events", kind: "Event", namespaced: true, statusSubresource: false };
const MAX_MESSAGE = 1024;

export class EventPoster {
  private queue: Pending[] = [];
  private wake: (() => void) | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly logger: Logger;
  private readonly capacity: number;
  private readonly concurrency: number;
  private readonly minRank: number;
  private readonly enabled: boolean;
  /** Counters for tests and metrics. */
  readonly stats = { posted: 0, failed: 0, dropped: 0 };

  constructor(private readonly options: PosterOptions) {
    this.logger = options.logger ?? silentLogger;
    this.capacity = options.capacity ?? 1000;
    this.concurrency = options.concurrency ?? 8;
    this.minRank = rank[options.level ?? "info"];
    this.enabled = options.enabled ?? true;
  }

  /** Whether an event of this level would be posted (so callers can skip building messages). */
  wants(level: LogLevel): boolean {
    return this.enabled && rank[level] >= this.minRank;
  }

  /** Queues an event about `object`. Never blocks, never throws. */
  post(object: KubeObject, type: EventType, reason: string, message: string, level: LogLevel = type === "Normal" ? "info" : "warn"): void {
    if (!this.wants(level) || object.kind === "Event" || !object.metadata?.uid) return;
    if (this.queue.length >= this.capacity) {
      this.queue.shift();
      this.stats.dropped++;
    }
    this.queue.push({ object, type, reason, message, at: new Date().toISOString() });
    this.wake?.();
  }

  /** Starts the background sender in `scope`. Without it, events wait for `flush()`. */
  start(scope: TaskScope): void {
    if (!this.enabled) return;
    void scope.spawn("event poster", (signal) => this.run(signal));
  }

  /** Sends everything queued, until `signal` aborts; then drops the rest. */
  async flush(signal: AbortSignal): Promise<void> {
    const stop = new Promise<void>((r) => (signal.aborted ? r() : signal.addEventListener("abort", () => r(), { once: true })));
    while ((this.queue.length || this.inFlight.size) && !signal.aborted) {
      while (this.queue.length && this.inFlight.size < this.concurrency) this.send(this.queue.shift()!, signal);
      await Promise.race([...this.inFlight, stop]);
    }
    if (signal.aborted && this.queue.length) {
      this.stats.dropped += this.queue.length;
      this.queue = [];
    }
  }

  private async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      if (!this.queue.length || this.inFlight.size >= this.concurrency) {
        await new Promise<void>((resolve) => {
          const done = () => {
            this.wake = undefined;
            signal.removeEventListener("abort", done);
            resolve();
          };
          this.wake = done;
          signal.addEventListener("abort", done, { once: true });
        });
        continue;
      }
      void this.send(this.queue.shift()!, signal).then(() => this.wake?.());
    }
    await Promise.all(this.inFlight);
  }

  /** Starts sending one event; the promise is tracked in `inFlight` until it settles. */
  private send(event: Pending, signal: AbortSignal): Promise<void> {
    const done: Promise<void> = this.sendOne(event, signal).finally(() => this.inFlight.delete(done));
    this.inFlight.add(done);
    return done;
  }

  private async sendOne(event: Pending, signal: AbortSignal): Promise<void> {
    const meta = event.object.metadata;
    const body: KubeObject = {
      apiVersion: "v1",
      kind: "Event",
      metadata: { generateName: `${meta.name ?? "object"}.`, namespace: meta.namespace ?? "default" },
      involvedObject: {
        apiVersion: event.object.apiVersion,
        kind: event.object.kind,
        name: meta.name,
        namespace: meta.namespace,
        uid: meta.uid,
        resourceVersion: meta.resourceVersion,
      },
      reason: event.reason,
      message: event.message.length > MAX_MESSAGE ? event.message.slice(0, MAX_MESSAGE - 3) + "..." : event.message,
      type: event.type,
      source: { component: this.options.component ?? "kobun" },
      reportingComponent: this.options.component ?? "kobun",
      reportingInstance: this.options.component ?? "kobun",
      firstTimestamp: event.at,
      lastTimestamp: event.at,
      eventTime: null,
      count: 1,
    };
    try {
      await this.options.client.create(EVENTS, meta.namespace ?? "default", body, { signal });
      this.stats.posted++;
    } catch (error) {
      this.stats.failed++;
      if (!signal.aborted) this.logger.debug("could not post an event", { reason: event.reason, error });
    }
  }
}
