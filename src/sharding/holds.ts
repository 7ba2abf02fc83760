// ShardHolds: which shards this replica works on, and the cycles running in each, so that a
// shard is handed over only after its work has stopped (DESIGN, behaviour 4, per shard). Each
// time a shard is taken it gets a new generation: a signal that aborts when it is given up,
// and a count of the cycles entered under it. Stopping aborts the signal and waits for the
// count to reach zero, bounded by a grace; cycles still running then are abandoned (their
// results are discarded by reconciling/ownership.ts, since their signal has aborted).
// Whether the lease is still ours is also asked of the clock, when a cycle enters and before it
// writes (`lapsed`): a process stalled past renewDeadline runs its due timers in due order, so
// a handler's continuation (or an event's cycle) would run before the timer that loses the shard.

interface Generation {
  controller: AbortController;
  running: number;
  idle?: () => void;
}

/** A cycle's hold on its shard: the signal that stops it, and `exit()` when it ended. */
export interface ShardHold {
  signal: AbortSignal;
  /**
   * Is the shard still this cycle's to write for? Asked before writing: a lapsed lease is given up at
   * once (the signal aborts).
   */
  current(): boolean;
  exit(): void;
}

const STOPPED = AbortSignal.abort(new DOMException("the shard is not owned by this replica", "AbortError"));

export class ShardHolds {
  private readonly current = new Map<number, Generation>();

  /** `lapsed(index)`: true (and the shard is given up, by a stop) when its lease passed renewDeadline by the clock. */
  constructor(readonly shards: number, private readonly lapsed: (index: number) => boolean = () => false) {}

  owned(): number[] {
    return [...this.current.keys()].sort((a, b) => a - b);
  }

  has(index: number): boolean {
    return this.current.has(index);
  }

  /** Starts working on a shard (a fresh generation). */
  start(index: number): void {
    if (!this.current.has(index)) this.current.set(index, { controller: new AbortController(), running: 0 });
  }

  /** The signal of a shard's current work; already aborted when the shard is not owned. */
  signalOf(index: number): AbortSignal {
    return this.current.get(index)?.controller.signal ?? STOPPED;
  }

  /** A cycle begins on an object of shard `index`; call `exit()` when it ended (or was abandoned). */
  enter(index: number): ShardHold {
    const generation = this.current.has(index) && !this.lapsed(index) ? this.current.get(index) : undefined;
    if (!generation) return { signal: STOPPED, current: () => false, exit: () => {} };
    generation.running++;
    let exited = false;
    return {
      signal: generation.controller.signal,
      current: () => this.current.get(index) === generation && !this.lapsed(index),
      exit: () => {
        if (exited) return;
        exited = true;
        if (--generation.running === 0) generation.idle?.();
      },
    };
  }

  /**
   * Gives a shard up: its signal aborts now; resolves once its cycles have exited, or after
   * `graceMs` with how many were still running (abandoned).
   */
  async stop(index: number, graceMs: number): Promise<number> {
    const generation = this.current.get(index);
    if (!generation) return 0;
    this.current.delete(index);
    generation.controller.abort(new DOMException(`shard ${index} is handed over`, "AbortError"));
    if (generation.running === 0) return 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await new Promise<void>((resolve) => {
      generation.idle = resolve;
      timer = setTimeout(resolve, graceMs);
    });
    clearTimeout(timer);
    return generation.running;
  }
}
