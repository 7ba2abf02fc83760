// Nudge: a loop's pause that something else can cut short. A watch that sees a change calls
// `nudge()`; the loop's `pause(ms)` then returns at once (or, if the loop is busy, the next
// pause does), so the change is acted on without waiting for the next period.

export class Nudge {
  private pending = false;
  private wake: (() => void) | undefined;

  /** Something changed: end the current pause, or skip the next one. */
  nudge(): void {
    this.pending = true;
    this.wake?.();
  }

  /** Forget earlier nudges: the loop is about to look at the current state. */
  clear(): void {
    this.pending = false;
  }

  /** Sleeps `ms`, or less when nudged or when `signal` aborts. */
  pause(ms: number, signal: AbortSignal): Promise<void> {
    if (this.pending || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener("abort", done, { once: true });
      this.wake = done;
    });
  }
}
