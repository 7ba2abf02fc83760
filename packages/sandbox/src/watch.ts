// One open watch stream: NDJSON over a chunked `application/json` response, one event per
// line, flushed per event. Handles history replay, synthetic ADDED, initial-events-end
// bookmarks, periodic BOOKMARKs, timeoutSeconds, selector transitions, and the fault hooks
// (stall, drop, raw lines, and delayWatches, which holds events back: watch-delay.ts). The set
// of open streams is exact: a stream leaves it the moment it ends for any reason, including the
// client going away.

import type { ChangeEvent, Store } from "./store.ts";
import type { Selector } from "./selectors.ts";
import type { ResourceDef } from "./resources.ts";
import { fromStored, storeKey } from "./event-store.ts";
import { statusBody } from "./status.ts";
import { asPartial, type PartialView } from "./partial.ts";
import { withReadDefaults } from "./schema.ts";
import type { DelayLine, WatchDelays } from "./watch-delay.ts";
import type { WatchMerges } from "./watch-merge.ts";

const encoder = new TextEncoder();

export interface WatchSpec {
  def: ResourceDef;
  version: string;
  ns: string;
  selector?: Selector;
  /** undefined/"0": synthetic ADDED of everything first; otherwise replay after this RV */
  resourceVersion?: string;
  sendInitialEvents: boolean;
  bookmarks: boolean;
  bookmarkIntervalMs: number;
  timeoutSeconds?: number;
  /** `kubectl get -w` asks for Table events: each object as a one-row Table (the first with its columns) */
  asTable?: (object: any, withColumns: boolean) => unknown;
  /** a CRD's conversion webhook (admission.ts): events are sent in order, each once converted */
  convert?: (object: any) => Promise<any>;
  /**
   * metadata only (partial.ts): each object as PartialObjectMetadata;
   * asked as a List, the stream ends at the first event
   */
  partial?: PartialView | undefined;
  /** faults.delayWatches: events and bookmarks held back for a while */
  delays?: WatchDelays;
  /** faults.mergeWatches: live events kept back, the latest state of each object only */
  merges?: WatchMerges;
  /** told of each line sent (not the empty line that commits the head): faults.watchLinesSent counts them */
  sent?: () => void;
}

export class WatchStream {
  readonly body: ReadableStream<Uint8Array>;
  private controller!: ReadableStreamDefaultController<Uint8Array>;
  private closed = false;
  private stalledUntil = 0;
  private stallTimer: ReturnType<typeof setTimeout> | undefined;
  private queue: string[] = [];
  /** lines held back by delayWatches; made at the first one */
  private delayed: DelayLine | undefined;
  private sentAny = false;
  /** past the replay or initial events: what mergeWatches may keep back */
  private live = false;
  private timers: ReturnType<typeof setInterval | typeof setTimeout>[] = [];
  private unsubscribe: () => void = () => {};
  private readonly apiVersion: string;
  private readonly res: string;
  get resourceKey(): string { return this.res; }
  get plural(): string { return this.spec.def.plural; }

  constructor(
    private readonly store: Store, private readonly spec: WatchSpec, private readonly onEnd: (w: WatchStream) => void,
    signal: AbortSignal,
  ) {
    this.apiVersion = spec.def.group ? `${spec.def.group}/${spec.version}` : spec.version;
    this.res = storeKey(spec.def);
    this.body = new ReadableStream<Uint8Array>({
      start: (c) => { this.controller = c; },
      cancel: () => this.end(false),
    });
    signal.addEventListener("abort", () => this.end(false), { once: true });
  }

  /**
   * begin: replay or synthesize, subscribe, arm timers.
   * Returns false if the RV was too old (stream already holds the ERROR).
   */
  begin(): void {
    const { spec, store } = this;
    const rvParam = spec.resourceVersion;
    const fromScratch = rvParam === undefined || rvParam === "" || rvParam === "0" || spec.sendInitialEvents;
    if (fromScratch) {
      for (const { body: stored } of store.list(this.res, spec.ns || undefined)) {
        const body = fromStored(spec.def, stored);
        if (!spec.selector || spec.selector(body)) this.sendEvent("ADDED", body);
      }
      if (spec.sendInitialEvents && spec.bookmarks) this.sendBookmark(true);
    } else {
      const rv = Number(rvParam);
      // the oldest RV this resource can be watched from: the retained history, and not before
      // the resource started being served (a CRD's creation), like the real per-resource cache
      const floor = Math.max(store.oldestAvailable(), spec.def.startRV);
      const events = Number.isFinite(rv) && rv >= floor ? store.since(rv) : undefined;
      if (!events) {
        const msg = Number.isFinite(rv)
          ? `too old resource version: ${rvParam} (${floor})`
          : `invalid resource version: ${rvParam}`;
        this.sendRaw(JSON.stringify({ type: "ERROR", object: statusBody(410, "Expired", msg) }));
        this.end(true);
        return;
      }
      for (const ev of events) this.onChange(ev);
    }
    this.unsubscribe = store.subscribe((ev) => this.onChange(ev));
    this.live = true;
    // Bun.serve withholds the end of the response head until the first body byte
    // (oven-sh/bun#33660), so a quiet watch would leave the client's fetch() pending.
    // Commit the head now: with bookmarks allowed, an immediate (valid) BOOKMARK; otherwise
    // one newline, which is JSON whitespace that NDJSON/JSON-stream decoders skip.
    // A held-back bookmark would hold the head back too: then the newline commits it.
    if (!this.sentAny) {
      if (spec.bookmarks && !this.holdsBack()) this.sendBookmark(false);
      else this.sendRaw("");
    }
    if (spec.bookmarks && spec.bookmarkIntervalMs > 0) {
      const bookmark = () => { if (!this.isStalled()) this.sendBookmark(false); };
      this.timers.push(setInterval(bookmark, spec.bookmarkIntervalMs));
    }
    if (spec.timeoutSeconds !== undefined && spec.timeoutSeconds > 0) {
      this.timers.push(setTimeout(() => this.end(true), spec.timeoutSeconds * 1000));
    }
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  private onChange(stored: ChangeEvent): void {
    if (stored.res !== this.res) return;
    if (this.spec.ns && stored.ns !== this.spec.ns) return;
    const { def } = this.spec;
    const ev = { ...stored, object: fromStored(def, stored.object), prev: fromStored(def, stored.prev) };
    const sel = this.spec.selector;
    if (!sel) return this.sendEvent(ev.type, ev.object);
    const now = sel(ev.object);
    const before = ev.prev !== undefined && sel(ev.prev);
    if (ev.type === "ADDED") { if (now) this.sendEvent("ADDED", ev.object); return; }
    if (ev.type === "DELETED") { if (before || now) this.sendEvent("DELETED", ev.object); return; }
    if (now && before) this.sendEvent("MODIFIED", ev.object);
    else if (now) this.sendEvent("ADDED", ev.object);
    else if (before) this.sendEvent("DELETED", ev.object);
  }

  private tableSent = false;

  /** events (and bookmarks) waiting for their conversion, so that none overtakes another */
  private converting: Promise<void> = Promise.resolve();

  /** an event kept back by mergeWatches, sent now */
  deliver(type: string, object: any): void {
    this.sendEvent(type, object, false);
  }

  private sendEvent(type: string, object: any, mergeable = this.live): void {
    const { def, version } = this.spec;
    if (mergeable && this.spec.merges?.hold(this, def.plural, type, object)) return;
    const { kind, apiVersion: _a, ...rest } = withReadDefaults(object, def.schemas?.get(def.storageVersion ?? version));
    const full = { kind, apiVersion: this.apiVersion, ...rest };
    const { convert, partial, delays } = this.spec;
    // kube-apiserver cannot transform an object into a list: it ends the stream, sending nothing.
    if (partial?.kind === "PartialObjectMetadataList") return this.end(true);
    const ms = delays ? delays.forEvent(def.plural, object.metadata?.namespace ?? "") : 0;
    if (convert) {
      return this.inOrder(async () => {
        const converted = await convert(full);
        return JSON.stringify({ type, object: partial ? asPartial(converted, partial) : converted });
      }, ms);
    }
    if (partial) return this.emit(JSON.stringify({ type, object: asPartial(full, partial) }), ms);
    if (this.spec.asTable) {
      this.emit(JSON.stringify({ type, object: this.spec.asTable(full, !this.tableSent) }), ms);
      this.tableSent = true;
      return;
    }
    this.emit(JSON.stringify({ type, object: full }), ms);
  }

  /** also mergeWatches' after its release: the stream's version past every event it kept or swallowed */
  sendBookmark(initialEnd: boolean): void {
    const metadata: Record<string, unknown> = { resourceVersion: String(this.store.rv) };
    if (initialEnd) metadata.annotations = { "k8s.io/initial-events-end": "true" };
    const partial = this.spec.partial;
    if (partial?.kind === "PartialObjectMetadataList") return this.end(true);
    if (!this.spec.bookmarks || (!initialEnd && this.spec.merges?.holding(this))) return;
    const object = partial
      ? { kind: partial.kind, apiVersion: partial.apiVersion, metadata }
      : { kind: this.spec.def.kind, apiVersion: this.apiVersion, metadata };
    const line = JSON.stringify({ type: "BOOKMARK", object });
    const ms = this.spec.delays ? this.spec.delays.forStream(this.plural, this.spec.ns) : 0;
    if (this.spec.convert) this.inOrder(async () => line, ms);
    else this.emit(line, ms);
  }

  /** an event or bookmark, held back `ms` (delayWatches) and never ahead of one held back before it */
  private emit(line: string, ms: number): void {
    if (this.closed) return;
    if (ms <= 0 && (this.delayed === undefined || this.delayed.size === 0)) return this.sendRaw(line);
    this.delayed ??= this.spec.delays!.line((held) => this.sendRaw(held));
    this.delayed.push(line, ms);
  }

  private holdsBack(): boolean {
    const delays = this.spec.delays;
    return (this.delayed?.size ?? 0) > 0 || (delays !== undefined && delays.forStream(this.plural, this.spec.ns) > 0);
  }

  /** after every line before it; a failed conversion ends the stream with an ERROR event, as the real server does */
  private inOrder(line: () => Promise<string>, delayMs: number): void {
    this.converting = this.converting.then(async () => {
      try {
        this.emit(await line(), delayMs);
      } catch (e) {
        const status = (e as { toStatus?: () => unknown }).toStatus?.()
          ?? statusBody(500, "InternalError", (e as Error).message);
        this.sendRaw(JSON.stringify({ type: "ERROR", object: status }));
        this.end(false);
      }
    });
  }

  /** enqueue one line (queued while stalled) */
  sendRaw(line: string): void {
    if (this.closed) return;
    if (this.isStalled()) { this.queue.push(line); return; }
    try {
      this.sentAny = true;
      this.controller.enqueue(encoder.encode(line + "\n"));
      if (line !== "") this.spec.sent?.();
    } catch {
      this.end(false);
    }
  }

  // Stalled until the timer has flushed the queue, not until the clock passes the deadline: a
  // loaded event loop runs the timer late, and a line sent in between would overtake the queue.
  private isStalled(): boolean {
    return this.stallTimer !== undefined;
  }

  stall(ms: number): void {
    if (this.closed) return;
    this.stalledUntil = Date.now() + ms;
    if (this.stallTimer) clearTimeout(this.stallTimer);
    this.stallTimer = setTimeout(() => {
      this.stallTimer = undefined;
      this.stalledUntil = 0;
      const q = this.queue;
      this.queue = [];
      for (const line of q) this.sendRaw(line);
    }, ms);
  }

  /** an ERROR event with a Status, then a clean close (as the apiserver does after ERROR) */
  sendErrorAndClose(code: number, reason: string, message: string): void {
    this.sendRaw(JSON.stringify({ type: "ERROR", object: statusBody(code, reason, message) }));
    this.end(true);
  }

  /** abruptly kill the response (no terminating chunk) */
  drop(): void {
    if (this.closed) return;
    this.closed = true;
    this.cleanup();
    // error(undefined): Bun resets the connection without logging an error
    try { this.controller.error(undefined); } catch { /* already gone */ }
  }

  /** end the stream; graceful=true closes it cleanly (after any stalled lines are flushed) */
  end(graceful: boolean): void {
    if (this.closed) return;
    if (graceful && this.isStalled()) {
      // closing is "sending" too: it happens when the stall ends
      const rest = Math.max(0, this.stalledUntil - Date.now());
      this.timers.push(setTimeout(() => this.end(true), rest + 1));
      return;
    }
    this.closed = true;
    this.cleanup();
    if (graceful) {
      try { this.controller.close(); } catch { /* already gone */ }
    }
  }

  private cleanup(): void {
    this.unsubscribe();
    for (const t of this.timers) clearTimeout(t as ReturnType<typeof setTimeout>);
    this.timers = [];
    if (this.stallTimer) clearTimeout(this.stallTimer);
    this.queue = [];
    this.delayed?.clear();
    this.spec.merges?.forget(this);
    this.onEnd(this);
  }
}
