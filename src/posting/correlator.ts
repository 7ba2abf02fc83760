// What client-go's event correlator does, so that a hot loop cannot storm the API server with
// Events: identical events (same object, type, reason, message) become one Event whose
// `count` grows; after `maxSimilar` different messages with the same reason on one object
// within `similarWindowMs`, further ones are combined into one Event too ("(combined from
// similar events): ..."); and each object has a token bucket (`burst` events, then one per
// `refillMs`): an event that would need a request with no token left is dropped.
// Pure bookkeeping with an injectable clock; the poster does the I/O. Memory is bounded:
// every table keeps at most `maxKeys` entries, the least recently used going first.

export interface CorrelatorOptions {
  /** Requests an object may cause at once. client-go: 25. */
  burst?: number;
  /** One more token per this many ms. client-go: 5 minutes. */
  refillMs?: number;
  /** Distinct messages of one reason on one object before they are combined. client-go: 10. */
  maxSimilar?: number;
  /** client-go: 10 minutes. */
  similarWindowMs?: number;
  /** client-go's LRU size: 4096. */
  maxKeys?: number;
  now?: () => number;
}

export interface EventFacts {
  uid: string;
  type: string;
  reason: string;
  message: string;
}

/** What to do with an event: `key` identifies the Event it counts into; `message` may be the combined one. */
export type Verdict = { send: true; key: string; message: string } | { send: false };

const COMBINED = "(combined from similar events): ";

class Lru<V> {
  private readonly map = new Map<string, V>();
  constructor(private readonly max: number) {}
  get(key: string): V | undefined {
    const value = this.map.get(key);
    if (value !== undefined) {
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value;
  }
  set(key: string, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value!);
  }
  delete(key: string): void {
    this.map.delete(key);
  }
}

export class EventCorrelator {
  private readonly burst: number;
  private readonly refillMs: number;
  private readonly maxSimilar: number;
  private readonly windowMs: number;
  private readonly now: () => number;
  private readonly buckets: Lru<{ tokens: number; at: number }>;
  /**
   * The messages seen per (object, type, reason): one string until a second one comes (most
   * objects only ever get one; a Set is ~0.6 KB of heap, and there are up to maxKeys of them).
   */
  private readonly similar: Lru<{ messages: string | Set<string>; since: number }>;

  constructor(options: CorrelatorOptions = {}) {
    this.burst = options.burst ?? 25;
    this.refillMs = options.refillMs ?? 300_000;
    this.maxSimilar = options.maxSimilar ?? 10;
    this.windowMs = options.similarWindowMs ?? 600_000;
    this.now = options.now ?? Date.now;
    const max = options.maxKeys ?? 4096;
    this.buckets = new Lru(max);
    this.similar = new Lru(max);
  }

  /** The key and message an event is posted under (identical and combined events share one key). */
  keyOf(event: EventFacts): { key: string; message: string } {
    const similarKey = `${event.uid}\u0000${event.type}\u0000${event.reason}`;
    const now = this.now();
    let seen = this.similar.get(similarKey);
    if (!seen || now - seen.since > this.windowMs) {
      this.similar.set(similarKey, (seen = { messages: this.maxSimilar > 0 ? event.message : new Set(), since: now }));
      if (this.maxSimilar > 0) return { key: `${similarKey}\u0000${event.message}`, message: event.message };
    }
    if (seen.messages === event.message) return { key: `${similarKey}\u0000${event.message}`, message: event.message };
    if (typeof seen.messages === "string") seen.messages = new Set([seen.messages]);
    if (seen.messages.size < this.maxSimilar || seen.messages.has(event.message)) {
      seen.messages.add(event.message);
      return { key: `${similarKey}\u0000${event.message}`, message: event.message };
    }
    return { key: `${similarKey}\u0000${COMBINED}`, message: COMBINED + event.message };
  }

  /** Takes one token of the object's bucket; false when it is empty (the event is dropped). */
  take(uid: string): boolean {
    const now = this.now();
    // get() made a known bucket the most recent; a new one is set once (one Map move per event, not two).
    let bucket = this.buckets.get(uid);
    if (!bucket) this.buckets.set(uid, (bucket = { tokens: this.burst, at: now }));
    bucket.tokens = Math.min(this.burst, bucket.tokens + (now - bucket.at) / this.refillMs);
    bucket.at = now;
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }
}

/** The Events already posted, by correlation key: the next identical one PATCHes its count. */
export class PostedEvents {
  private readonly lru: Lru<{ name: string; namespace: string; count: number; first: string }>;
  constructor(maxKeys = 4096) {
    this.lru = new Lru(maxKeys);
  }
  get(key: string) {
    return this.lru.get(key);
  }
  set(key: string, value: { name: string; namespace: string; count: number; first: string }): void {
    this.lru.set(key, value);
  }
  forget(key: string): void {
    this.lru.delete(key);
  }
}
