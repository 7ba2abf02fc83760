// A counting semaphore with FIFO waiters: at most `limit` permits out at once. `acquire()`
// returns nothing when a permit is free (no promise on the hot path), else a promise that
// resolves when one is handed over by `release()` (straight to the longest waiter).

export class Semaphore {
  private out = 0;
  /** Waiters, FIFO from `head` (no O(n) shift). */
  private waiting: (() => void)[] = [];
  private head = 0;
  /** Most permits out at once so far. */
  peak = 0;

  constructor(readonly limit: number) {}

  /** Permits out now. */
  get inUse(): number {
    return this.out;
  }

  acquire(): Promise<void> | undefined {
    if (this.out < this.limit) {
      this.took();
      return undefined;
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  release(): void {
    if (this.head < this.waiting.length) {
      const next = this.waiting[this.head]!;
      this.waiting[this.head++] = undefined as never;
      if (this.head > 1024 && this.head * 2 > this.waiting.length) {
        this.waiting.splice(0, this.head);
        this.head = 0;
      }
      next(); // the permit passes directly to the next waiter
    } else this.out--;
  }

  /** Grants every waiter a permit at once (on abort: each sees its signal, then releases). */
  grantAll(): void {
    const waiting = this.waiting.splice(this.head);
    this.waiting = [];
    this.head = 0;
    for (const grant of waiting) {
      this.took();
      grant();
    }
  }

  private took(): void {
    this.out++;
    if (this.out > this.peak) this.peak = this.out;
  }
}
