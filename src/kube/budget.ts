// The connection budget for watch streams. Bun's fetch runs at most
// BUN_CONFIG_MAX_HTTP_REQUESTS requests at once per process (default 256), queueing the rest
// in order; a watch holds its slot for as long as it streams. Unbounded, watches fill every
// slot and each later request (a handler's PATCH) waits forever behind them. So streams take
// a slot from this budget first, and the budget stays a reserve short of Bun's limit:
// ordinary requests only ever queue behind other requests, which finish.
//
// Measured on Bun 1.4.5: the limit is read when the process starts and is shared by every
// fetch and FetchSession of the process; setting process.env.BUN_CONFIG_MAX_HTTP_REQUESTS
// at run time, even before the first fetch, changes nothing. Raise it in the environment of
// the process (e.g. the Deployment's env) and this budget follows.

/** Bun's own default for BUN_CONFIG_MAX_HTTP_REQUESTS. */
const BUN_DEFAULT_SLOTS = 256;
/** Slots always left to ordinary requests: workers' writes, peering keep-alives, Events. */
const MIN_RESERVE = 64;

export interface BudgetState {
  /** Streams holding a slot. */
  readonly open: number;
  /** Streams waiting for a slot. */
  readonly waiting: number;
  /** The most streams that may be open at once. */
  readonly limit: number;
}

export class StreamBudget {
  private held = 0;
  private readonly queue: { grant(): void }[] = [];
  private readonly listeners = new Set<(state: BudgetState) => void>();

  /** `slots`: the process's fetch limit; a quarter of it (at least 64) is kept for requests. */
  constructor(readonly slots: number) {
    this.limit = Math.max(1, slots - Math.max(MIN_RESERVE, Math.floor(slots / 4)));
  }

  readonly limit: number;

  get open(): number {
    return this.held;
  }

  get waiting(): number {
    return this.queue.length;
  }

  get state(): BudgetState {
    return { open: this.held, waiting: this.queue.length, limit: this.limit };
  }

  /**
   * Waits for a slot (first come, first served) and holds it until `signal` aborts (the caller
   * aborts it when the stream ends) or the returned release is called (a stream that failed
   * to open). Rejects with the signal's reason if it aborts first. `waiting` is called when
   * the caller has to queue.
   */
  async acquire(signal: AbortSignal, waiting?: () => void): Promise<() => void> {
    if (signal.aborted) throw signal.reason;
    if (this.held < this.limit && this.queue.length === 0) return this.take(signal);
    waiting?.();
    return new Promise<() => void>((resolve, reject) => {
      const entry = {
        grant: () => {
          signal.removeEventListener("abort", onAbort);
          resolve(this.take(signal));
        },
      };
      const onAbort = () => {
        const at = this.queue.indexOf(entry);
        if (at >= 0) this.queue.splice(at, 1);
        this.changed();
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.queue.push(entry);
      this.changed();
    });
  }

  /** Called with the new state whenever a stream waits, gets a slot or gives one back. */
  onChange(listener: (state: BudgetState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private take(signal: AbortSignal): () => void {
    this.held++;
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      signal.removeEventListener("abort", release);
      this.release();
    };
    signal.addEventListener("abort", release, { once: true });
    this.changed();
    return release;
  }

  private release(): void {
    this.held--;
    const next = this.queue.shift();
    if (next) next.grant();
    else this.changed();
  }

  private changed(): void {
    if (this.listeners.size === 0) return;
    const state = this.state;
    for (const listener of this.listeners) listener(state);
  }
}

/** Bun's per-process limit as the process was started with it. */
export function fetchSlots(env: Record<string, string | undefined> = process.env): number {
  const raw = env.BUN_CONFIG_MAX_HTTP_REQUESTS;
  const value = raw === undefined ? NaN : Number(raw);
  return Number.isInteger(value) && value > 0 ? value : BUN_DEFAULT_SLOTS;
}

/** One budget per process, like Bun's limit it stands for: every client shares it. */
export const streamBudget = new StreamBudget(fetchSlots());
