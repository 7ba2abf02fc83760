// The freeze toggle. Several holders may freeze the operator at once (a peering object in
// each namespace, a manual `kobun freeze`, a lease not held); it runs only when none does.
// Freezing aborts the current "running" signal, which closes every watch stream fed from it
// at once (seed 000: close the streams, do not ignore events); unfreezing hands out a fresh
// signal so the watchers start again with a new LIST.
//
// A toggle may have a parent (the operator-wide one): a namespace's toggle is frozen when its
// own peering says so OR when the parent is frozen, so a namespace's peering freezes only
// that namespace's streams, as in Kopf.

/**
 * The operator's freeze switch: `freeze(holder, reason)` until every holder has called `unfreeze(holder)`;
 * pass one to `run({ toggle })` to freeze it from outside.
 */
export class Toggle {
  private readonly holders = new Map<string, string>();
  private running = new AbortController();
  private waiters = new Set<() => void>();
  private listeners = new Set<(frozen: boolean) => void>();
  private readonly detachParent: () => void = () => {};

  constructor(private readonly parent?: Toggle) {
    if (parent) {
      if (parent.frozen) this.running.abort(new DOMException("frozen: parent toggle", "AbortError"));
      // The parent's transition is ours only while we hold no freeze of our own.
      this.detachParent = parent.onChange((frozen) => {
        if (this.holders.size > 0) return;
        if (frozen) this.enterFrozen("parent toggle");
        else this.leaveFrozen();
      });
    }
  }

  get frozen(): boolean {
    return this.holders.size > 0 || (this.parent?.frozen ?? false);
  }

  /** Who holds the freeze and why, for logs and /healthz (the parent's holders included). */
  reasons(): Record<string, string> {
    return { ...this.parent?.reasons(), ...Object.fromEntries(this.holders) };
  }

  /** A signal that aborts when the operator freezes. Take it afresh after every wait. */
  get runningSignal(): AbortSignal {
    return this.running.signal;
  }

  freeze(holder: string, reason = holder): void {
    const wasFrozen = this.frozen;
    this.holders.set(holder, reason);
    if (!wasFrozen) this.enterFrozen(reason);
  }

  unfreeze(holder: string): void {
    if (!this.holders.delete(holder) || this.frozen) return;
    this.leaveFrozen();
  }

  /** Subscribe to freeze/resume transitions; returns the unsubscribe function. */
  onChange(listener: (frozen: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Stops following the parent (when a namespace stops being served). */
  dispose(): void {
    this.detachParent();
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

  private enterFrozen(reason: string): void {
    this.running.abort(new DOMException(`frozen: ${reason}`, "AbortError"));
    for (const listener of this.listeners) listener(true);
  }

  private leaveFrozen(): void {
    this.running = new AbortController();
    const waiters = this.waiters;
    this.waiters = new Set();
    for (const wake of waiters) wake();
    for (const listener of this.listeners) listener(false);
  }
}
