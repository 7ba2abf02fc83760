// `faults.delayWatches`: a watch cache that lags behind the store. Events (and bookmarks) of the
// matching resources reach each open watch stream a set time later than they would have, in
// order, while writes and LISTs answer at once: a client's write returns the new resourceVersion
// while its watch still shows the old state (the stale view of the Sieve paper). Off, it costs a
// property check per event: no timer and no allocation. The delays count in the machine's time
// unless a test gives its own (`useTime`: a virtual clock, where a held line is a timer it fires).

/** which events are held back, and for how long; at most one rule at a time */
export interface WatchDelayRule { ms: number; plural?: string; namespace?: string }

/** A time the delays count in: ms now, and a timer that `cancel()` stops. */
export interface DelayTime {
  now(): number;
  timer(ms: number, fire: () => void): () => void;
}

const machineTime: DelayTime = {
  now: () => performance.now(),
  timer(ms, fire) {
    const timer = setTimeout(fire, ms);
    return () => clearTimeout(timer);
  },
};

/** The rule in force, shared by every stream, and what the streams hold back in all. */
export class WatchDelays {
  private rule: WatchDelayRule | undefined;
  /** read at each line held back and each timer armed */
  time: DelayTime = machineTime;
  /** lines held back and timers armed, over every stream (0 and 0 once all have ended) */
  readonly pending = { lines: 0, timers: 0 };

  /** replaces the rule; ms <= 0 turns delaying off (what is already held back still leaves on time) */
  set(ms: number, match: { plural?: string; namespace?: string } = {}): void {
    this.rule = ms > 0 ? { ms, ...match } : undefined;
  }

  /** how long to hold an event of an object in namespace `ns` ("" cluster-scoped) on a watch of `plural` */
  forEvent(plural: string, ns: string): number {
    const rule = this.rule;
    if (rule === undefined) return 0;
    if (rule.plural !== undefined && rule.plural !== plural) return 0;
    return rule.namespace === undefined || rule.namespace === ns ? rule.ms : 0;
  }

  /** how long to hold a bookmark of a watch of `plural` in `ns` ("": all namespaces) */
  forStream(plural: string, ns: string): number {
    const rule = this.rule;
    if (rule === undefined) return 0;
    if (rule.plural !== undefined && rule.plural !== plural) return 0;
    return rule.namespace === undefined || ns === "" || rule.namespace === ns ? rule.ms : 0;
  }

  /** the time later delays count in (none: the machine's again) */
  useTime(time: DelayTime | undefined): void {
    this.time = time ?? machineTime;
  }

  line(send: (line: string) => void): DelayLine {
    return new DelayLine(this, send);
  }
}

/**
 * One stream's held-back lines, each with the time it may leave. A line leaves only after every
 * line before it (so order holds even when the delay changes); one timer, armed for the head.
 */
export class DelayLine {
  private lines: string[] = [];
  private dues: number[] = [];
  private head = 0;
  private cancel: (() => void) | undefined;
  private readonly pending: WatchDelays["pending"];

  constructor(private readonly delays: WatchDelays, private readonly send: (line: string) => void) {
    this.pending = delays.pending;
  }

  get size(): number {
    return this.lines.length - this.head;
  }

  push(line: string, ms: number): void {
    this.lines.push(line);
    this.dues.push(this.delays.time.now() + ms);
    this.pending.lines++;
    if (this.cancel === undefined) this.arm();
  }

  /** drops what is held back and its timer (the stream ended: it gets nothing more) */
  clear(): void {
    if (this.cancel !== undefined) {
      this.cancel();
      this.cancel = undefined;
      this.pending.timers--;
    }
    this.pending.lines -= this.size;
    this.lines = [];
    this.dues = [];
    this.head = 0;
  }

  private arm(): void {
    // a timer may fire a little early: flush() checks the clock and re-arms for the rest
    const time = this.delays.time;
    this.cancel = time.timer(Math.max(0, Math.ceil(this.dues[this.head]! - time.now())), this.flush);
    this.pending.timers++;
  }

  private readonly flush = (): void => {
    this.cancel = undefined;
    this.pending.timers--;
    const now = this.delays.time.now();
    while (this.head < this.lines.length && this.dues[this.head]! <= now) {
      const line = this.lines[this.head]!;
      this.head++;
      this.pending.lines--;
      this.send(line); // may end the stream, which clears this line
    }
    if (this.head === this.lines.length) {
      this.lines = [];
      this.dues = [];
      this.head = 0;
    } else if (this.cancel === undefined) {
      if (this.head >= 1024) { // a line that never drains must not keep every sent line alive
        this.lines = this.lines.slice(this.head);
        this.dues = this.dues.slice(this.head);
        this.head = 0;
      }
      this.arm();
    }
  };
}
