// Fault injection for tests: misbehaving watch streams (410, arbitrary ERRORs, unknown
// event types, malformed lines, dropped or stalled connections), history compaction, and
// `failNext` — the next N matching requests answered with a real Status of a given code;
// `stallNext` — the next N matching requests left unanswered for a while (a half-dead peer);
// `delayWatches` — watch events arrive late while writes answer at once (a stale cache);
// `mergeWatches` — only the latest state of each object is delivered (watch-merge.ts);
// `clients` — faults aimed at one client: cut off (a killed process), chosen requests failed (client-faults.ts).

import { ApiStatusError, reasonFor } from "./status.ts";
import type { Store } from "./store.ts";
import { ClientFaults } from "./client-faults.ts";
import { WatchDelays, type DelayTime } from "./watch-delay.ts";
import { WatchMerges } from "./watch-merge.ts";
import type { WatchStream } from "./watch.ts";

export interface SandboxFaults {
  /** every open watch (of `plural` only, if given) gets ERROR 410 Expired and is closed: its client must relist */
  expireWatches(match?: { plural?: string }): void;
  /**
   * drop the event history (and advance the resourceVersion) so any older resourceVersion is too old: a watch
   * from one, and a paged list's continue token (410 Expired, with a token that goes on at the latest)
   */
  compact(): void;
  /** ERROR event with that Status to all open watches (streams stay open, like a mid-stream ERROR) */
  sendError(code: number, reason?: string, message?: string): void;
  /** an event of an unknown type, e.g. "FUTURE", with an empty object */
  sendUnknownEvent(type: string): void;
  /** a line that is not JSON */
  sendMalformedLine(text?: string): void;
  /** abruptly close all watch connections (no final chunk) */
  dropWatches(): void;
  /**
   * send nothing (incl. bookmarks) on open watches (of `plural` only, if given) for ms; events queue and are sent
   * after (0: now)
   */
  stallWatches(ms: number, match?: { plural?: string }): void;
  /**
   * every watch event (and bookmark) of `plural` / in `namespace`, if given, reaches each open watch ms later than it
   * would have, in order; writes and LISTs are not delayed. Replaces the previous delay; 0 (or reset()) turns it off;
   * NaN or a negative is refused
   */
  delayWatches(ms: number, match?: { plural?: string; namespace?: string }): void;
  /**
   * the time delayWatches counts in from now on: a test's virtual clock (`now()` in ms, `timer(ms, fire)` returning
   * a cancel), where a held line is a timer it fires; none: the machine's (the default)
   */
  delayTime(time?: DelayTime): void;
  /**
   * lines (events, bookmarks, errors) sent so far on every watch of `client` (by its impersonated user, else its
   * User-Agent): a test compares them with those its client received to know none is still on the way; with
   * `plural`, those of its watches of that resource only
   */
  watchLinesSent(client: string, match?: { plural?: string }): number;
  /** lines held back by delayWatches, and timers armed for them, over all open watches (0 and 0 after stop) */
  pendingDelayed(): { lines: number; timers: number };
  /**
   * from now on, live watch events of `plural` / in `namespace` are kept back on every open watch, only the latest
   * state of each object kept, until releaseMerged() sends them (intermediate states never seen)
   */
  mergeWatches(match?: { plural?: string; namespace?: string }): void;
  /** ends mergeWatches and sends what it kept, one event per object, then a BOOKMARK past all it held or swallowed */
  releaseMerged(): void;
  /** events mergeWatches keeps back, over all open watches */
  pendingMerged(): number;
  /** faults aimed at one client (by its impersonated user, else its User-Agent): cut off, requests heard or failed */
  readonly clients: ClientFaults;
  /** forget every rule: failNext, stallNext, delayWatches (also done by stats.reset()) */
  reset(): void;
  /** answer the next n matching requests with a Status of that code (429/503 get Retry-After) */
  failNext(n: number, status: number, match?: { verb?: string; plural?: string; retryAfterSeconds?: number }): void;
  /**
   * leave the next n matching requests unanswered for ms (nothing is sent, not even headers); `unserved`: one
   * whose client gives up meanwhile is never served (a timeout)
   */
  stallNext(n: number, ms: number, match?: StallMatch): void;
}

interface FailRule { left: number; status: number; verb?: string; plural?: string; retryAfterSeconds?: number }
/** which requests stallNext holds: `client`, a prefix of who sends them (as faults.clients names clients) */
export interface StallMatch {
  verb?: string;
  plural?: string;
  client?: string;
  /** matching requests to let through first (default 0) */
  skip?: number;
  /** a request whose client gave up while it was held is never served (a timeout: the write was never made) */
  unserved?: boolean;
}

interface StallRule extends StallMatch { left: number; ms: number }

export class Faults implements SandboxFaults {
  private rules: FailRule[] = [];
  private stalls: StallRule[] = [];
  private readonly linesSent = new Map<string, number>();
  /** read by every watch stream (watch-request.ts) */
  readonly watchDelays = new WatchDelays();
  /** read by every watch stream too */
  readonly watchMerges = new WatchMerges();
  readonly clients = new ClientFaults();

  constructor(private readonly store: Store, private readonly watches: Set<WatchStream>) {}

  expireWatches(match: { plural?: string } = {}): void {
    for (const w of [...this.watches]) {
      if (match.plural !== undefined && w.plural !== match.plural) continue;
      w.sendErrorAndClose(410, "Expired", `too old resource version: ${this.store.rv} (${this.store.rv + 1})`);
    }
  }

  compact(): void {
    this.store.nextRV();
    this.store.compact();
  }

  sendError(code: number, reason?: string, message?: string): void {
    const line = JSON.stringify({
      type: "ERROR",
      object: {
        kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure",
        message: message ?? `sandbox fault: ${code}`, reason: reason ?? reasonFor(code), code,
      },
    });
    for (const w of this.watches) w.sendRaw(line);
  }

  sendUnknownEvent(type: string): void {
    const line = JSON.stringify({ type, object: { kind: "Status", apiVersion: "v1", metadata: {} } });
    for (const w of this.watches) w.sendRaw(line);
  }

  sendMalformedLine(text = "{this is not json"): void {
    for (const w of this.watches) w.sendRaw(text);
  }

  dropWatches(): void {
    for (const w of [...this.watches]) w.drop();
  }

  stallWatches(ms: number, match: { plural?: string } = {}): void {
    for (const w of this.watches) if (match.plural === undefined || w.plural === match.plural) w.stall(ms);
  }

  delayWatches(ms: number, match: { plural?: string; namespace?: string } = {}): void {
    // NaN or a negative would turn delaying off: a stale-read test that computed its delay wrongly would pass
    if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0) {
      const given = typeof ms === "string" ? JSON.stringify(ms) : String(ms);
      throw new Error(`faults.delayWatches(${given}): the delay is a number of ms, 0 or more (0 turns it off)`);
    }
    this.watchDelays.set(ms, match);
  }

  watchLinesSent(client: string, match: { plural?: string } = {}): number {
    const key = match.plural === undefined ? client : `${client} ${match.plural}`;
    return this.linesSent.get(key) ?? 0;
  }

  /** what a watch of `client` on `plural` calls for each line it sends */
  watchLineCounter(client: string, plural: string): () => void {
    const keys = [client, `${client} ${plural}`];
    return () => {
      for (const key of keys) this.linesSent.set(key, (this.linesSent.get(key) ?? 0) + 1);
    };
  }

  delayTime(time?: DelayTime): void {
    this.watchDelays.useTime(time);
  }

  pendingDelayed(): { lines: number; timers: number } {
    return { ...this.watchDelays.pending };
  }

  mergeWatches(match: { plural?: string; namespace?: string } = {}): void {
    this.watchMerges.set(match);
  }

  releaseMerged(): void {
    this.watchMerges.release();
  }

  pendingMerged(): number {
    return this.watchMerges.pending;
  }

  failNext(
    n: number, status: number, match: { verb?: string; plural?: string; retryAfterSeconds?: number } = {},
  ): void {
    this.rules.push({ left: n, status, ...match });
  }

  stallNext(n: number, ms: number, match: StallMatch = {}): void {
    this.stalls.push({ left: n, ms, ...match });
  }

  /** How long to hold this request of `client` before answering it, if at all. */
  stallFor(verb: string, plural: string | undefined, client = ""): { ms: number; unserved: boolean } | undefined {
    const rule = this.stalls.find((r) => r.left > 0 && (!r.verb || r.verb === verb) &&
      (!r.plural || r.plural === plural) && (!r.client || client.startsWith(r.client)));
    if (rule === undefined) return undefined;
    if ((rule.skip ?? 0) > 0) {
      rule.skip!--; // let through first (the rule is this fault's own copy)
      return undefined;
    }
    if (--rule.left <= 0) this.stalls.splice(this.stalls.indexOf(rule), 1);
    return { ms: rule.ms, unserved: rule.unserved ?? false };
  }

  /** throws the injected error if a rule matches this request */
  check(verb: string, plural: string | undefined): void {
    const r = take(this.rules, verb, plural);
    if (!r) return;
    const retry = r.retryAfterSeconds ?? (r.status === 429 || r.status === 503 ? 1 : undefined);
    const message = r.status === 429
      ? "Too many requests, please try again later."
      : `sandbox: injected failure (${r.status})`;
    throw new ApiStatusError(r.status, reasonFor(r.status), message,
      retry !== undefined ? { retryAfterSeconds: retry } : {}, retry);
  }

  reset(): void {
    this.rules = [];
    this.stalls = [];
    this.watchDelays.set(0);
    this.watchMerges.release();
    this.clients.reset();
  }
}

/** Uses up one count of the first rule matching this request (rules are spent in place). */
function take<R extends { left: number; verb?: string; plural?: string }>(
  rules: R[], verb: string, plural: string | undefined,
): R | undefined {
  const index = rules.findIndex(
    (r) => r.left > 0 && (!r.verb || r.verb === verb) && (!r.plural || r.plural === plural),
  );
  if (index < 0) return undefined;
  const rule = rules[index]!;
  if (--rule.left <= 0) rules.splice(index, 1);
  return rule;
}
