// The freeze toggle. Several holders may freeze the operator at once (a peering object in
// each namespace, a manual `kobun freeze`, a lease not held); it runs only when none does.
// Freezing aborts the current "running" signal, which closes every watch stream fed from it
// at once (seed 000: close the streams, do not ignore events); unfreezing hands out a fresh
// signal so the watchers start again with a new LIST.

export class Toggle {
  private readonly holders = new Map<string, string>();
  private running = new AbortController();
  private waiters = new Set<() => void>();
  private listeners = new Set<(frozen: boolean) => void>();

  get frozen(): boolean {
    return this.holders.size > 0;
  }

  /** Who holds the freeze and why, for logs and /healthz. */
  reasons(): Record<string, string> {
    return Object.fromEntries(this.holders);
  }

  /** A signal that aborts when the operator freezes. Take it afresh after every wait. */
  get runningSignal(): AbortSignal {
    return this.running.signal;
  }

  freeze(holder: string, reason = holder): void {
    const wasFrozen = this.frozen;
    this.holders.set(holder, reason);
    if (wasFrozen) return;
    this.running.abort(new DOMException(`frozen: ${reason}`, "AbortError"));
    for (const listener of this.listeners) listener(true);
  }

  unfreeze(holder: string): void {
    if (!this.holders.delete(holder) || this.frozen) return;
    this.running = new AbortController();
    const waiters = this.waiters;
    this.waiters = new Set();
    for (const wake of waiters) wake();
    for (const listener of this.listeners) listener(false);
  }

  /** Subscribe to freeze/resume transitions; returns the unsubscribe function. */
  onChange(listener: (frozen: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resolves true once the operator is not frozen, or false when `signal` aborts first. */
  waitRunning(signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return Promise.resolve(false);
    if (!this.frozen) return Promise.resolve(true);
    return new Promise((resolve) => {
      const wake = () => {
        signal.removeEventListener("abort", onAbort);
        resolve(true);
      };
      const onAbort = () => {
        this.waiters.delete(wake);
        resolve(false);
      };
      this.waiters.add(wake);
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }
}
