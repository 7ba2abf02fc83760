// Heap pacing: a full collection once the JS heap has grown by half of what was live after the
// last one (at least HEADROOM_MIN, 2 MiB). JavaScriptCore lets a small heap take 32 MiB of new cells
// between collections whatever it holds, and a compiled Bun program never returns the pages a
// burst touched: a 2,000-object burst, whose live heap is 8–10 MB, grew its heap to 24 MB of
// which 17 were garbage, and that is the process's RSS for the rest of its life (issue 15).
// Paced like Go's GOGC=50: collections cost in proportion to what is allocated (each marks the
// live heap once per half of it allocated), so the same per object at 2,000 and at 100,000.
// One pacer per process, however many run()s are in it: the heap is the process's.

import { fullGC, heapSize } from "bun:jsc";

/**
 * The least growth that triggers a collection: below it a collection costs more than it saves.
 * A 2,000-object burst keeps 7 MB live (3.3 of it code) and allocates ~1.3 MB/s on a busy
 * machine: 6 MiB let its blocks grow to 17 MB in two collections; at 2 MiB the half of the
 * live heap (3.5 MB) decides, a collection every few seconds of a burst (issue 15).
 */
export const HEADROOM_MIN = 2 * 1024 * 1024;
/** Growth allowed over the live heap, as a fraction of it. */
export const HEADROOM_RATIO = 0.5;
/** How often the heap size is read (a read costs ~0.3 µs; a burst grows the heap by ~5 MB/s). */
const INTERVAL_MS = 100;

/** The pacing decision, apart from the clock and the heap (tests drive it with numbers). */
export class HeapPacer {
  /** The heap after the last collection, ours or JavaScriptCore's (the lowest reading since ours). */
  private live: number;

  constructor(
    private readonly read: () => number = heapSize,
    private readonly collect: () => unknown = fullGC,
    private readonly headroom = { min: HEADROOM_MIN, ratio: HEADROOM_RATIO },
  ) {
    this.live = read();
  }

  /** Reads the heap; collects if it outgrew its headroom. True when it collected. */
  tick(): boolean {
    const size = this.read();
    // A collection of JavaScriptCore's own shows as a lower reading: what it left is live.
    if (size < this.live) this.live = size;
    if (size < this.live + Math.max(this.headroom.min, this.live * this.headroom.ratio)) return false;
    this.collect();
    this.live = this.read();
    return true;
  }
}

let users = 0;
let timer: ReturnType<typeof setInterval> | undefined;

/** Paces the process's heap until `signal` aborts (with other callers: until the last one's does). */
export function paceHeap(signal: AbortSignal): void {
  if (signal.aborted) return;
  if (users++ === 0) {
    const pacer = new HeapPacer();
    timer = setInterval(() => pacer.tick(), INTERVAL_MS);
    timer.unref(); // pacing never keeps a process alive
  }
  signal.addEventListener("abort", () => {
    if (--users === 0) {
      clearInterval(timer);
      timer = undefined;
    }
  }, { once: true });
}

/** Whether a pacer runs in this process (for tests). */
export function pacing(): boolean {
  return timer !== undefined;
}
