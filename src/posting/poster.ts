// posting/: Kubernetes Events about handled objects (handler successes, retries, failures)
// and whatever handlers post through `ctx.event`, sent in the background. `post()` only
// appends to a bounded queue and never blocks or throws; a task started in the operator's
// scope sends them (a few at a time) to core v1 `events` in the object's namespace;
// `flush(signal)` drains the queue at shutdown, for as long as `signal` allows: Events are
// best-effort (as in Kubernetes), so what does not fit is dropped and counted in one debug line.
// Like client-go's recorder (correlator.ts): an identical event still queued only raises its
// count, one already posted is PATCHed with the new count, similar ones are combined, and each
// object has a token bucket. What an Event looks like on the wire is events.ts.
// Must never post about Event objects (that would feed itself), never retry forever, never
// hold a handler up, and never import handling/.

import type { KubeClient } from "../kube/index.ts";
import type { KubeObject, Resource } from "../kube/index.ts";
import { silentLogger, type Logger, type LogLevel } from "../util/index.ts";
import type { TaskScope } from "../util/index.ts";
import { EventCorrelator, PostedEvents, type CorrelatorOptions } from "./correlator.ts";
import { EVENTS, eventName, involvedOf, newEvent, repeatPatch, type Involved } from "./events.ts";

/** Kubernetes' two types, or any other word the API server takes (core v1 does not check it). */
export type EventType = "Normal" | "Warning" | (string & {});

export interface PosterOptions {
  client: Pick<KubeClient, "create" | "patch">;
  logger?: Logger;
  /** Default true. */
  enabled?: boolean;
  /** The least severe level posted: Normal events are "info", Warning ones "warn"/"error". Default "info". */
  level?: LogLevel;
  /** Whether handlers' log lines (at `level` or above) are posted too, as Kopf does. Default false. */
  logs?: boolean;
  /** Most queued events; older ones are dropped beyond it. Default 1000. */
  capacity?: number;
  /** Events sent concurrently. Default 8. */
  concurrency?: number;
  /** The `source.component` / `reportingController`. Default "kobun". */
  component?: string;
  /** Aggregation and rate limits (client-go's defaults: 25 events per object, then one per 5 minutes). */
  correlation?: CorrelatorOptions;
}

interface Pending {
  key: string;
  object: Involved;
  type: EventType;
  reason: string;
  message: string;
  first: string;
  last: string;
  /** Occurrences so far, and how many of them the server has been told of. */
  count: number;
  sent: number;
  state: "queued" | "sending";
}

const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export class EventPoster {
  private queue: Pending[] = [];
  /** Events queued or being sent, by correlation key: another identical one only counts. */
  private readonly pending = new Map<string, Pending>();
  private readonly correlator: EventCorrelator;
  private readonly posted = new PostedEvents();
  private wake: (() => void) | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  /** Makes Event names unique within this process; starts at random, so two processes rarely meet. */
  private sequence = Math.floor(Math.random() * 0x1000000);
  /**
   * The signal of every write. Not the scope's: writes in flight when the operator stops may
   * finish within the shutdown's flush window; `flush()` aborts them when its window ends.
   */
  private sending = new AbortController();
  private readonly logger: Logger;
  private readonly capacity: number;
  private readonly concurrency: number;
  private readonly minRank: number;
  private readonly enabled: boolean;
  private readonly logs: boolean;
  /** Counters for tests and metrics. */
  readonly stats = { posted: 0, failed: 0, dropped: 0, counted: 0, throttled: 0 };

  constructor(private readonly options: PosterOptions) {
    this.logger = options.logger ?? silentLogger;
    this.capacity = options.capacity ?? 1000;
    this.concurrency = options.concurrency ?? 8;
    this.minRank = rank[options.level ?? "info"];
    this.enabled = options.enabled ?? true;
    this.logs = options.logs ?? false;
    this.correlator = new EventCorrelator(options.correlation);
  }

  /** Whether an event of this level would be posted (so callers can skip building messages). */
  wants(level: LogLevel): boolean {
    return this.enabled && rank[level] >= this.minRank;
  }

  /** Whether handlers' log lines are posted: `posting.logs`, and at least one level is. */
  get postsLogs(): boolean {
    return this.enabled && this.logs;
  }

  /**
   * This poster as the handlers of an object see it while the object may be taken from this replica: once `held`
   * aborts (a freeze, a handover), what they post (`ctx.event`, posted log lines) is dropped, as their runs'
   * results are: nothing more is written for them. A new view per call: keep it.
   */
  heldBy(held: AbortSignal): EventPoster {
    const view = Object.create(this) as EventPoster;
    const post: EventPoster["post"] = (...args) => (held.aborted ? undefined : this.post(...args));
    Object.defineProperty(view, "post", { value: post });
    return view;
  }

  /** Queues an event about `object`. Never blocks, never throws. */
  post(
    object: KubeObject, type: EventType, reason: string, message: string,
    level: LogLevel = type === "Normal" ? "info" : "warn",
  ): void {
    const uid = object?.metadata?.uid;
    if (!this.wants(level) || object.kind === "Event" || !uid) return;
    const at = new Date().toISOString();
    const { key, message: text } = this.correlator.keyOf({ uid, type, reason, message });
    const same = this.pending.get(key);
    if (same) {
      same.count++;
      same.last = at;
      same.message = text;
      this.stats.counted++;
      return;
    }
    if (!this.correlator.take(uid)) {
      this.stats.throttled++;
      return;
    }
    if (this.queue.length >= this.capacity) {
      this.pending.delete(this.queue.shift()!.key);
      this.stats.dropped++;
    }
    const event: Pending = {
      key, object: involvedOf(object, uid), type, reason, message: text,
      first: at, last: at, count: 1, sent: 0, state: "queued",
    };
    this.pending.set(key, event);
    this.queue.push(event);
    this.wake?.();
  }

  /** Starts the background sender in `scope`. Without it, events wait for `flush()`. */
  start(scope: TaskScope): void {
    if (!this.enabled) return;
    void scope.spawn("event poster", (signal) => this.run(signal));
  }

  /**
   * Sends everything queued, until `signal` aborts; then aborts the writes still in flight and
   * drops the rest, with one debug line saying how many.
   */
  async flush(signal: AbortSignal): Promise<void> {
    const stop = Promise.withResolvers<void>();
    const onAbort = () => stop.resolve();
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    try {
      while ((this.queue.length || this.inFlight.size) && !signal.aborted) {
        while (this.queue.length && this.inFlight.size < this.concurrency) this.send(this.queue.shift()!);
        await Promise.race([...this.inFlight, stop.promise]);
      }
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
    if (signal.aborted) await this.abandon();
  }

  /** Aborts the writes in flight and drops the queue: nothing of the poster runs afterwards. */
  private async abandon(): Promise<void> {
    const inFlight = this.inFlight.size;
    const queued = this.queue.length;
    this.sending.abort();
    await Promise.allSettled([...this.inFlight]);
    this.sending = new AbortController();
    this.stats.dropped += this.queue.length;
    for (const event of this.queue) this.pending.delete(event.key);
    this.queue = [];
    if (!inFlight && !queued) return;
    this.logger.debug("events not posted at shutdown (best-effort)", { dropped: queued, aborted: inFlight });
  }

  private async run(signal: AbortSignal): Promise<void> {
    // One abort listener for the loop's life, not one per wait (a wait per Event posted).
    const stop = () => this.wake?.();
    signal.addEventListener("abort", stop, { once: true });
    try {
      while (!signal.aborted) {
        if (!this.queue.length || this.inFlight.size >= this.concurrency) {
          await new Promise<void>((resolve) => (this.wake = () => {
            this.wake = undefined;
            resolve();
          }));
          continue;
        }
        void this.send(this.queue.shift()!).then(() => this.wake?.());
      }
    } finally {
      signal.removeEventListener("abort", stop);
    }
    // Writes still in flight are flush()'s to finish or abort: the shutdown gives them its window.
  }

  /** Starts sending one event; the promise is tracked in `inFlight` until it settles. */
  private send(event: Pending): Promise<void> {
    const done: Promise<void> = this.sendOne(event, this.sending.signal).finally(() => this.inFlight.delete(done));
    this.inFlight.add(done);
    return done;
  }

  private async sendOne(event: Pending, signal: AbortSignal): Promise<void> {
    event.state = "sending";
    const count = event.count;
    try {
      await this.write(event, count, signal);
      event.sent = count;
      this.stats.posted++;
    } catch (error) {
      this.stats.failed++;
      if (!signal.aborted) this.logger.debug("could not post an event", { reason: event.reason, error });
    }
    // Occurrences while it was being sent: one more write of the count, if the object's budget allows.
    if (event.count > event.sent && event.sent > 0 && !signal.aborted && this.correlator.take(event.object.uid)) {
      event.state = "queued";
      this.queue.push(event);
      this.wake?.();
      return;
    }
    this.pending.delete(event.key);
  }

  /** Creates the Event, or PATCHes the count of the one posted before under the same key. */
  private async write(event: Pending, count: number, signal: AbortSignal): Promise<void> {
    const before = this.posted.get(event.key);
    if (before) {
      const total = before.count + count - event.sent;
      try {
        const patch = repeatPatch(total, event.last, event.message);
        await this.options.client.patch(EVENTS, before.namespace, before.name, patch, { signal, discardAnswer: true });
        this.posted.set(event.key, { ...before, count: total });
        return;
      } catch (error) {
        // Events expire (an hour by default): then this one starts afresh.
        if ((error as { code?: number }).code !== 404) throw error;
        this.posted.forget(event.key);
        event.sent = 0;
      }
    }
    const namespace = event.object.namespace ?? "default";
    const name = eventName(event.object.name ?? "object", this.sequence++);
    const body = newEvent(event, name, namespace, this.options.component ?? "kobun");
    await this.options.client.create(EVENTS, namespace, body, { signal, discardAnswer: true });
    this.posted.set(event.key, { name, namespace, count: event.count, first: event.first });
  }
}
