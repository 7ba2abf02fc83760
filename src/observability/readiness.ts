// Readiness that means something: ready once every watched stream has completed its initial
// list and the objects it listed were processed once, and (unless `frozen-is-ready`) not
// frozen. Each stream reports through a gate of its own that lives as long as the stream: a
// namespace that goes away takes its pending gate with it, as health problems do.

export interface ReadinessGate {
  /** This stream's first list was processed; later relists do not make it unready again. */
  ready(): void;
}

export interface ReadinessReport {
  ready: boolean;
  /** Streams whose initial list is not processed yet, by name. */
  waiting: string[];
  /** Why it is frozen, by holder (a peer, a manual freeze, a lease), when frozen counts. */
  frozen: Record<string, string>;
}

export class Readiness {
  private readonly pending = new Map<string, object>();
  private readonly drained = new Set<() => void>();
  private frozenReasons: () => Record<string, string> = () => ({});
  private frozenIsReady = false;
  private standbyHolders: ReadonlySet<string> = new Set();

  /** `name`'s stream must list and process before the operator is ready; until `life` ends. */
  gate(name: string, life: AbortSignal): ReadinessGate {
    const token = {};
    if (life.aborted) return { ready() {} };
    this.pending.set(name, token);
    const release = () => {
      if (this.pending.get(name) !== token) return;
      this.pending.delete(name);
      for (const check of this.drained) check();
    };
    life.addEventListener("abort", release, { once: true });
    return { ready: release };
  }

  /**
   * Resolves true once no stream waits for its first list to be processed (the operator's `ready`
   * signal); false if `signal` aborts first. First looked at on the next turn of the event loop,
   * so the streams started just before are counted. A replica that starts frozen resolves only
   * once it runs and has listed.
   */
  listed(signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (listed: boolean) => {
        this.drained.delete(check);
        signal.removeEventListener("abort", stop);
        clearTimeout(first);
        resolve(listed);
      };
      const check = () => this.pending.size === 0 && done(true);
      const stop = () => done(false);
      signal.addEventListener("abort", stop, { once: true });
      this.drained.add(check);
      const first = setTimeout(check, 0);
    });
  }

  /**
   * Where the freeze's reasons come from. A frozen replica is unready, or with `frozenIsReady`
   * ready even before it listed anything (a standby has nothing to list: its streams wait).
   * Frozen only by `standbyHolders` (reason keys), it is ready whatever `frozenIsReady` says.
   */
  frozenBy(
    reasons: () => Record<string, string>, frozenIsReady: boolean, standbyHolders: ReadonlySet<string> = new Set(),
  ): void {
    this.frozenReasons = reasons;
    this.frozenIsReady = frozenIsReady;
    this.standbyHolders = standbyHolders;
  }

  report(): ReadinessReport {
    const waiting = [...this.pending.keys()].sort();
    const frozen = this.frozenReasons();
    const holders = Object.keys(frozen);
    // A freeze by a standby holder alone (a replica waiting to take over in a rolling update) is
    // ready: it is what a rollout waits for.
    const standbyOnly = holders.length > 0 && holders.every((holder) => this.standbyHolders.has(holder));
    if (standbyOnly) return { ready: true, waiting, frozen };
    return { ready: holders.length > 0 ? this.frozenIsReady : waiting.length === 0, waiting, frozen };
  }
}
