// Watcher: the I/O half of the watch state machine in `state.ts`. It performs what the
// current state asks for (a LIST page, a streaming list, a WATCH from a resourceVersion),
// feeds every answer and every line back through the pure transitions, and turns their
// outcomes into WatchEvents. Policy for failures lives in `errors.ts`.
//
// Invariants: at most one connection per watcher at any moment; none after events() ends
// (abort, `break`, throw); no timer outlives its wait; 410 never ends the iteration.

import { silentLogger, sleep, type Logger } from "../util/index.ts";
import { METADATA_OBJECT } from "../kube/index.ts";
import { resourceName, resourcePath, type KubeObject, type Resource, type Status } from "../kube/index.ts";
import { WatchStream } from "./stream.ts";
import { classify, errorEvent, forbidden, lineFacts, lineTooLong, rejected, WatchError } from "./errors.ts";
import { LineTooLongError } from "./lines.ts";
import { decoded } from "./decoded.ts";
import { listed, relistBegins, relistDone } from "./relisting.ts";
import { ReconnectPacing } from "./pacing.ts";
import { StreamingListSupport } from "./streaming-list.ts";
import { defaults, derivedInactivityTimeoutMs, listQuery, watchQuery, type WatcherOptions } from "./options.ts";
import * as S from "./state.ts";
import type { WatchClient, WatchEvent, WatchObserver } from "./types.ts";
import { Store, type Shelf } from "../caching/index.ts";

export class Watcher {
  private state: S.WatchState = S.empty;
  private lastResourceVersion: string | undefined;
  /** The shardSelector of the current events() call (options.shardSelector, asked once per call). */
  private shardSelector: string | undefined;
  /** What it knows: its shelf of the resource's store (caching/), kept across events() calls for the relist diff. */
  private readonly shelf: Shelf;
  private readonly warnedTypes = new Set<string>();
  private running = false;
  private readonly pacing: ReconnectPacing;
  private readonly log: Logger;
  private readonly path: string;
  private readonly namespace: string | null;
  private readonly pageSize: number;
  private readonly serverTimeout: number;
  private readonly inactivityMs: number;
  private readonly maxLineBytes: number;
  private readonly streamingList: StreamingListSupport;
  private readonly observer: WatchObserver | undefined;
  /** What every object handed on or kept goes through (decoded.ts). */
  private readonly decoded = (object: KubeObject) => decoded(object, this.resource, this.options.metadataOnly);

  constructor(
    private readonly client: WatchClient,
    readonly resource: Resource,
    private readonly options: WatcherOptions = {},
  ) {
    this.namespace = resource.namespaced ? (options.namespace ?? null) : null;
    this.path = resourcePath(resource, this.namespace);
    this.pageSize = options.pageSize ?? defaults.pageSize;
    this.serverTimeout = options.serverTimeoutSeconds ?? defaults.serverTimeoutSeconds;
    this.inactivityMs = options.inactivityTimeoutMs ?? derivedInactivityTimeoutMs(this.serverTimeout);
    this.maxLineBytes = options.maxLineBytes ?? defaults.maxLineBytes;
    const streamingList = options.streamingList ?? defaults.streamingList;
    this.streamingList = new StreamingListSupport(streamingList, resourceName(resource));
    this.observer = options.observer;
    this.shelf = options.shelf ?? new Store(resource, { keeps: options.keep ?? "bodies" }).shelf();
    this.pacing = ReconnectPacing.of(options.backoff ?? defaults.backoff);
    const logger = options.logger ?? silentLogger;
    this.log = logger.child({ resource: resourceName(resource), namespace: this.namespace ?? "*" });
  }

  get resourceVersion(): string | undefined {
    return S.resourceVersionOf(this.state) ?? this.lastResourceVersion;
  }

  /**
   * Objects currently known, by uid (with `keep: "identity"`, a snapshot of their identities alone); kept across
   * events() calls for the relist diff.
   */
  get known(): ReadonlyMap<string, KubeObject> {
    return this.shelf.known;
  }

  /** The current state of the machine (for diagnostics and tests). */
  get currentState(): S.WatchState {
    return this.state;
  }

  /**
   * Lists, then watches, for as long as `signal` is not aborted. Every call starts with a
   * fresh relist. Ends quietly on abort; throws WatchError on a non-410 ERROR, on 403, and
   * on other non-retryable rejections. One consumer at a time.
   */
  events(signal: AbortSignal): AsyncIterable<WatchEvent> {
    return this.run(signal);
  }

  private async *run(signal: AbortSignal): AsyncGenerator<WatchEvent> {
    if (this.running) throw new Error(`watcher of ${resourceName(this.resource)} already has a consumer`);
    this.running = true;
    this.pacing.restart();
    this.state = S.empty;
    this.shelf.reset();
    this.shardSelector = this.options.shardSelector?.();
    try {
      while (!signal.aborted) {
        const delay = this.pacing.takePending();
        if (delay > 0) {
          await sleep(delay, signal);
          continue;
        }
        const paged = this.state.kind === "listing" || (this.state.kind === "empty" && !this.streamingList.wanted);
        const step = paged ? this.listPage(signal) : this.watch(signal);
        // Checked after every yield, when the consumer resumes us: an abort decided while it
        // handled an event (a freeze) ends the iteration there, not after the rest of a LIST
        // page or of a network chunk. Leaving closes the step's connection (its finally).
        for await (const event of step) {
          yield event;
          if (signal.aborted) return;
        }
      }
    } finally {
      this.lastResourceVersion = this.resourceVersion;
      this.state = S.empty;
      this.running = false;
    }
  }

  private async *listPage(signal: AbortSignal): AsyncGenerator<WatchEvent> {
    const token = this.state.kind === "listing" ? this.state.continueToken : undefined;
    if (!token) yield* relistBegins(this.shelf);
    let list;
    try {
      const { namespace, shardSelector, pageSize: limit } = this;
      const query = listQuery(this.options, { namespace, shardSelector, limit, continue: token });
      list = await this.client.list(this.resource, { ...query, signal });
    } catch (error) {
      await this.failed(error, "list", signal);
      return;
    }
    for (const object of list.items) yield listed(this.shelf, this.decoded(object));
    this.state = S.pageReceived(list);
    if (this.state.kind === "listed") yield* relistDone(this.shelf, this.state.resourceVersion);
  }

  // ---- the watch stream (also carries a streaming list) ----

  private async *watch(signal: AbortSignal): AsyncGenerator<WatchEvent> {
    const streaming = this.state.kind === "empty";
    if (streaming) {
      yield* relistBegins(this.shelf);
      this.state = S.initialStarted();
    }
    const conn = new WatchStream(this.client, this.inactivityMs, signal, this.maxLineBytes);
    let events = 0;
    // How the stream was left: "server" (it ended), "left" (an outcome made us leave), or failed.
    let exit: StreamExit = { kind: "left" };
    try {
      const query = watchQuery(streaming ? undefined : (S.resourceVersionOf(this.state) ?? ""), this.serverTimeout, {
        labelSelector: this.options.labelSelector, fieldSelector: this.options.fieldSelector,
        shardSelector: this.shardSelector,
      });
      await conn.open(this.path, query, this.options.metadataOnly ? METADATA_OBJECT : undefined);
      this.state = S.watchOpened(this.state);
      exit = { kind: "server" };
      // Line by line, in this one generator: a nested one per stream costs each event a hop.
      stream: for await (const lines of conn.batches()) {
        for (const line of lines) {
          events++; // read only when the server ended the stream: then no line was malformed
          const taken = this.line(line);
          if (taken === undefined) continue;
          if ("kind" in taken) { exit = taken; break stream; }
          if ("type" in taken) yield taken;
          else yield* taken;
        }
      }
    } catch (error) {
      if (error instanceof WatchError) throw error;
      if (error instanceof LineTooLongError) throw lineTooLong(this.resource, this.namespace, error);
      exit = { kind: "failed", error };
    } finally {
      conn.close();
    }
    if (signal.aborted) return;
    if (conn.inactive) return this.inactive();
    if (exit.kind === "server") return this.ended(conn, events);
    if (exit.kind === "failed") {
      if (this.state.kind === "initial" && this.streamingList.untried) {
        const f = classify(exit.error);
        if (f.kind === "rejected") {
          return this.noStreamingList(`${f.error.code} ${f.error.reason ?? ""}`.trim(), f.error.status);
        }
      }
      await this.failed(exit.error, "watch", signal);
    }
  }

  /**
   * One line of the stream, through the transitions of state.ts: the event(s) to hand on, nothing, or how it
   * leaves the stream.
   */
  private line(line: string): WatchEvent | Iterable<WatchEvent> | StreamExit | undefined {
    const raw = S.parseLine(line);
    if ("malformed" in raw) {
      this.log.warn("malformed line in watch stream; re-watching", { why: raw.malformed, ...lineFacts(line) });
      return { kind: "failed", error: new Error(`malformed line: ${raw.malformed}`) };
    }
    this.observer?.event(raw.type);
    const step = S.eventReceived(this.state, raw);
    this.state = step.state;
    const outcome = step.outcome;
    switch (outcome.kind) {
      case "apply":
        this.pacing.delivered();
        this.shelf.apply(outcome.type, this.decoded(outcome.object));
        return { type: outcome.type, object: outcome.object };
      case "initial":
        return listed(this.shelf, this.decoded(outcome.object));
      case "initial-done":
        this.streamingList.worked();
        return relistDone(this.shelf, outcome.resourceVersion);
      case "bookmark":
        this.pacing.delivered();
        if (this.state.kind === "watching") this.shelf.reached(this.state.resourceVersion);
        return;
      case "gone":
        this.log.info("resource version expired (410 Gone); relisting", { status: S.describe(outcome.status) });
        this.observer?.restarted("410");
        this.pacing.gone();
        return LEFT;
      case "error":
        throw errorEvent(this.resource, this.namespace, outcome.status);
      case "no-streaming-list":
        this.noStreamingList(outcome.why, outcome.status);
        return LEFT;
      case "unknown":
        if (!this.warnedTypes.has(outcome.type)) {
          this.warnedTypes.add(outcome.type);
          this.log.warn("unknown watch event type; skipping events of this type", { type: outcome.type });
        }
        return;
      case "malformed":
        return; // state.ts judged the event unusable; the stream goes on
    }
  }

  /** The server ended the stream: normally its timeoutSeconds, so re-watch at once. */
  private ended(conn: WatchStream, events: number): void {
    if (this.state.kind === "initial" && this.streamingList.probing) {
      return this.noStreamingList("stream ended before the initial-events-end bookmark");
    }
    this.observer?.restarted("timeout");
    this.state = S.streamEnded(this.state);
    const pause = this.pacing.watchEnded(events, conn.bytes, conn.openedAt);
    if (pause > 0) this.log.debug("watch ended immediately without events; backing off", { delayMs: pause });
  }

  /** No bytes for inactivityMs: the connection is presumed dead; re-watch at once. */
  private inactive(): void {
    if (this.state.kind === "initial" && this.streamingList.probing) {
      return this.noStreamingList("no initial-events-end bookmark before the inactivity timeout");
    }
    this.observer?.restarted("stall");
    const { inactivityMs, resourceVersion } = this;
    this.log.info("no bytes from the watch stream; re-watching", { inactivityMs, resourceVersion });
    this.state = S.streamEnded(this.state);
  }

  /** The server has no streaming list: a WatchError in "always", else a paged LIST at once (and from now on). */
  private noStreamingList(why: string, status?: Status): void {
    this.streamingList.refused(why, status);
    this.state = S.empty;
    this.log.info("server does not support streaming lists; using paged LIST", { why });
  }

  private async failed(error: unknown, verb: "list" | "watch", signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    const f = classify(error);
    switch (f.kind) {
      case "gone":
        this.log.info("resource version expired (410 Gone); relisting", { verb });
        this.observer?.restarted("410");
        this.state = S.gone();
        this.pacing.gone();
        return;
      case "forbidden":
        throw forbidden(this.resource, this.namespace, verb, f.error);
      case "rejected":
        throw rejected(this.resource, this.namespace, verb, f.error);
      case "aborted":
      case "retry": {
        this.state = S.streamEnded(this.state);
        this.observer?.restarted("error");
        const delay = this.pacing.failed(f.kind === "retry" ? f.retryAfterMs : 0);
        this.log.warn(`${verb} failed; retrying`, { why: f.kind === "retry" ? f.why : "aborted", delayMs: delay });
        await sleep(delay, signal);
        return;
      }
    }
  }
}

/** How a watch stream was left: it ended ("server"), an outcome left it, or it failed. */
type StreamExit = { kind: "server" } | { kind: "left" } | { kind: "failed"; error: unknown };
const LEFT: StreamExit = { kind: "left" };
