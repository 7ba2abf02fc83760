// The ready keys' two lines, as controller-runtime's priority queue orders them: a key whose
// item is news (an object created or changed while the queue drains a relist of thousands)
// runs before every key that only re-checks what was already handled (a relist's objects, a
// requested re-run, a retry), so a new object waits for the permits, not for the backlog.
// Within a line, first come first served. A key already in the low line whose item becomes
// news moves up: the low line keeps a stale entry, told apart by the key's ticket, and skipped.
// With `prioritized` off there is one line (plain FIFO), for comparison and for who asks for it.

/**
 * Which line a ready key stands in: "high" for news (a watch event), "low" for a re-check of
 * what was handled already (a relist's objects, a re-run, a retry).
 */
export type Priority = "high" | "low";

/** What a line holds of a key: the key's ticket says which of its entries is the live one. */
export interface Lined {
  /** The live entry's number (0: not in line). */
  ticket: number;
  /** The line the live entry is in. */
  lane: Priority;
}

/** One FIFO, taken from `head` (no O(n) shift), with each entry's ticket beside it. */
class Line<S> {
  private entries: S[] = [];
  private tickets: number[] = [];
  private head = 0;

  push(entry: S, ticket: number): void {
    this.entries.push(entry);
    this.tickets.push(ticket);
  }

  /** The oldest entry whose ticket is still its key's, dropping stale ones on the way. */
  take(live: (entry: S, ticket: number) => boolean): S | undefined {
    while (this.head < this.entries.length) {
      const entry = this.entries[this.head]!;
      const ticket = this.tickets[this.head]!;
      this.entries[this.head++] = undefined as never;
      this.compact();
      if (live(entry, ticket)) return entry;
    }
    return undefined;
  }

  private compact(): void {
    if (this.head <= 1024 || this.head * 2 <= this.entries.length) return;
    this.entries.splice(0, this.head);
    this.tickets.splice(0, this.head);
    this.head = 0;
  }

  clear(): void {
    this.entries = [];
    this.tickets = [];
    this.head = 0;
  }
}

export class ReadyLines<S extends Lined> {
  private readonly high = new Line<S>();
  private readonly low = new Line<S>();
  private tickets = 0;

  constructor(private readonly prioritized: boolean) {}

  /** Puts the key in its line; a key already waiting in the low line and now news moves up. */
  add(key: S, priority: Priority): void {
    const lane: Priority = this.prioritized ? priority : "low";
    if (key.ticket && (key.lane === "high" || lane === "low")) return;
    key.ticket = ++this.tickets;
    key.lane = lane;
    (lane === "high" ? this.high : this.low).push(key, key.ticket);
  }

  /** The next key to run: the first line's oldest, else the second's. */
  take(): S | undefined {
    const live = (key: S, ticket: number): boolean => key.ticket === ticket;
    const key = this.high.take(live) ?? this.low.take(live);
    if (key) key.ticket = 0;
    return key;
  }

  clear(): void {
    this.high.clear();
    this.low.clear();
  }
}
