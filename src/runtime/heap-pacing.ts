// Heap pacing: a full collection once the JS heap has grown by half of what was live after the
// last one (at least HEADROOM_MIN). JavaScriptCore lets a small heap take 32 MiB of new cells
// between collections whatever it holds, and a compiled Bun program never returns the pages a
// burst touched: a 2,000-object burst, whose live heap is 8–10 MB, grew its heap to 24 MB of
// which 17 were garbage, and that is the process's RSS for the rest of its life (issue 15).
// Paced like Go's GOGC=50: collections cost in proportion to what is allocated (each marks the
// live heap once per half of it allocated), so the same per object at 2,000 and at 100,000.
// One pacer per process, however many run()s are in it: the heap is the process's.
// It sleeps while nothing happens: after QUIET_TICKS looks at a heap that did not grow, its
// timer stops until heapActivity() (a watch event, a request's answer) wakes it. A timer read
// ten times a second for ever made an idle operator's tick hot enough for the optimising JIT,
// whose compiler code then stayed paged in: +1.7 MB of idle RSS after 25 s (bench/idle.ts --late).
// As it goes to sleep, what a burst left over its last collection (below the headroom, so never
// collected while it ran) is collected if it is a good part of the live heap: else it stays the
// process's RSS until the next activity, which then pays for the burst (at 100,000 objects, a
// full collection charged to the next 1,000 update events made them 0.48 ms of CPU each; 0.20–0.23
// since; bench/scale.ts). At most one such collection per wake, and only after an eighth of the
// live heap was allocated since the last one: activity in bursts with quiet gaps of half a second
// may so be collected up to four times as often as the headroom alone would, each collection
// costing in proportion to the live heap.

import { fullGC, heapSize } from "bun:jsc";

/** The least growth that triggers a collection: below it a collection costs more than it saves. */
export const HEADROOM_MIN = 6 * 1024 * 1024;
/** Growth allowed over the live heap, as a fraction of it. */
export const HEADROOM_RATIO = 0.5;
/**
 * How often the heap size is read while awake. A read walks the heap's blocks: 5–7 µs at 2–8 MB,
 * 80–110 µs at 24–64 MB (Bun 1.4.5), so at most ~1 ms of a second; a burst grows the heap by ~5 MB/s.
 */
const INTERVAL_MS = 100;
/** Looks in a row at a heap grown by less than QUIET_BYTES, after which the pacer sleeps. */
export const QUIET_TICKS = 5;
/** Growth between two looks that is no activity (timers and bookkeeping of an idle process). */
export const QUIET_BYTES = 64 * 1024;
/** What a burst may leave uncollected when the pacer goes to sleep: this much at least… */
export const SETTLE_MIN = 2 * 1024 * 1024;
/** …or this fraction of the live heap (a full collection costs in proportion to it). */
export const SETTLE_RATIO = 0.125;

/** The pacing decision, apart from the clock and the heap (tests drive it with numbers). */
export class HeapPacer {
  /** The heap after the last collection, ours or JavaScriptCore's (the lowest reading since ours). */
  private live: number;
  /** The last reading, and how many looks in a row found the heap grown by less than QUIET_BYTES. */
  private last: number;
  private quietLooks = 0;

  constructor(
    private readonly read: () => number = heapSize,
    private readonly collect: () => unknown = fullGC,
    private readonly headroom = { min: HEADROOM_MIN, ratio: HEADROOM_RATIO },
  ) {
    this.live = this.last = read();
  }

  /** The last QUIET_TICKS looks found the heap (almost) unchanged: nothing is allocating. */
  get quiet(): boolean {
    return this.quietLooks >= QUIET_TICKS;
  }

  /** Looks start again from now (after a sleep, the heap's growth meanwhile is not the next look's). */
  woken(): void {
    this.quietLooks = 0;
  }

  /** Reads the heap; collects if it outgrew its headroom. True when it collected. */
  tick(): boolean {
    const size = this.read();
    this.quietLooks = size - this.last < QUIET_BYTES ? this.quietLooks + 1 : 0;
    this.last = size;
    // A collection of JavaScriptCore's own shows as a lower reading: what it left is live.
    if (size < this.live) this.live = size;
    return this.grownPast(this.headroom.min, this.headroom.ratio) && this.collected();
  }

  /**
   * Going to sleep (quiet): collects what the heap grew by since the last collection, if it is
   * worth one. A young-generation collection of JavaScriptCore's own never reads below `live` (what
   * it promoted still counts), so the burst's last garbage is counted; a full one of its own that
   * read lower is the live heap the growth counts from. True when it collected.
   */
  settle(): boolean {
    return this.grownPast(SETTLE_MIN, SETTLE_RATIO) && this.collected();
  }

  /** The last reading is over the live heap by `min`, or by `ratio` of it if that is more. */
  private grownPast(min: number, ratio: number): boolean {
    return this.last >= this.live + Math.max(min, this.live * ratio);
  }

  private collected(): true {
    this.collect();
    this.live = this.last = this.read();
    return true;
  }
}

let users = 0;
let pacer: HeapPacer | undefined;
let timer: ReturnType<typeof setInterval> | undefined;
/** Called each time the pacer goes to sleep: activity ended and what it left was collected. */
const quietListeners = new Set<() => void>();
/** How many times the pacer woke (activity after a quiet): whoever waits on a quiet tells it lasted. */
let wakes = 0;

function look(): void {
  pacer!.tick();
  if (!pacer!.quiet) return;
  pacer!.settle();
  sleep();
  for (const listener of quietListeners) listener();
}

function sleep(): void {
  clearInterval(timer);
  timer = undefined;
}

/** Something that allocates happened (a watch event, an answer): a sleeping pacer looks again. */
export function heapActivity(): void {
  if (timer !== undefined || pacer === undefined) return;
  pacer.woken();
  wakes++;
  timer = setInterval(look, INTERVAL_MS);
  timer.unref(); // pacing never keeps a process alive
}

/**
 * Paces the process's heap until `signal` aborts (with other callers: until the last one's does).
 * `make`: the pacer of the first caller (tests give one reading a heap of numbers).
 */
export function paceHeap(signal: AbortSignal, make: () => HeapPacer = () => new HeapPacer()): void {
  if (signal.aborted) return;
  if (users++ === 0) {
    pacer = make();
    heapActivity();
  }
  signal.addEventListener("abort", () => {
    if (--users > 0) return;
    sleep();
    pacer = undefined;
  }, { once: true });
}

/** Calls `listener` each time the pacer goes quiet (after a burst, once collected), until `signal` aborts. */
export function whenQuiet(signal: AbortSignal, listener: () => void): void {
  if (signal.aborted) return;
  const once = (): void => listener(); // its own identity: one listener may be added twice
  quietListeners.add(once);
  signal.addEventListener("abort", () => quietListeners.delete(once), { once: true });
}

/** Whether a pacer is kept in this process (for tests). */
export function pacing(): boolean {
  return pacer !== undefined;
}

/** The count of the pacer's wakes so far: unchanged between two readings, the process stayed quiet. */
export function pacerWakes(): number {
  return wakes;
}

/** Whether its timer runs (it sleeps while the heap does not grow; for tests). */
export function pacerAwake(): boolean {
  return timer !== undefined;
}
