// The renew deadline of each held shard: when its Lease was last written by us, and the one timer
// per shard that loses it once renewDeadline passes without another write. On the monotonic clock
// (performance.now()), so a clock step moves no deadline. Apart from leases.ts because it is the
// part of losing a shard that is about time, not about Leases; ShardLeases says what losing means.

export class RenewDeadlines {
  /** When each held shard's last successful write was sent. */
  private readonly renewedAt = new Map<number, number>();
  /** Per held shard: loses it when renewDeadline passes without a renewal. */
  private readonly timers = new Map<number, ReturnType<typeof setTimeout>>();

  constructor(
    private readonly renewDeadlineMs: number,
    private readonly lose: (index: number, why: string) => void,
  ) {}

  /**
   * A held shard's Lease was written by us: its renew deadline starts again, from when the write
   * was sent (an answer read late, by a stalled process, must not stretch what the others see).
   */
  renewed(index: number, sentAt: number): void {
    this.renewedAt.set(index, sentAt);
    clearTimeout(this.timers.get(index));
    const left = Math.max(0, sentAt + this.renewDeadlineMs - performance.now());
    this.timers.set(index, setTimeout(() => this.lose(index, "not renewed within renewDeadline"), left));
  }

  /** Past renewDeadline by the clock, its timer not run yet (holds.ts says why that matters): lost now. */
  lapsed(index: number): boolean {
    const at = this.renewedAt.get(index);
    if (at === undefined || performance.now() - at < this.renewDeadlineMs) return false;
    this.lose(index, "not renewed within renewDeadline (seen late: this process was stalled)");
    return true;
  }

  /** The last write of the shard is renewDeadline old or older, or there was none. */
  overdue(index: number): boolean {
    return performance.now() - (this.renewedAt.get(index) ?? -Infinity) >= this.renewDeadlineMs;
  }

  forget(index: number): void {
    this.renewedAt.delete(index);
    clearTimeout(this.timers.get(index));
    this.timers.delete(index);
  }
}
