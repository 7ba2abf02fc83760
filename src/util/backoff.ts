// Capped exponential backoff with full jitter, reset after a healthy period.
// Used by every reconnect loop so a flapping API server is not hammered in lockstep.

export interface BackoffOptions {
  /** First delay, in ms. */
  initial: number;
  /** Largest delay, in ms. */
  max: number;
  factor?: number;
  /** Fraction of the delay randomised (0 = none, 1 = full jitter). */
  jitter?: number;
  /** After this many ms without a failure, the next failure starts from `initial` again. */
  resetAfter?: number;
}

export class Backoff {
  private attempt = 0;
  private lastFailure = 0;

  constructor(private readonly options: BackoffOptions) {}

  /** The delay before the next attempt, in ms. */
  next(now: number = Date.now()): number {
    const { initial, max, factor = 2, jitter = 0.5, resetAfter } = this.options;
    if (resetAfter !== undefined && this.lastFailure && now - this.lastFailure > resetAfter) this.attempt = 0;
    this.lastFailure = now;
    const base = backoffDelay(this.attempt, { initial, max, factor });
    this.attempt++;
    return Math.round(base * (1 - jitter * Math.random()));
  }

  reset(): void {
    this.attempt = 0;
  }

  get attempts(): number {
    return this.attempt;
  }
}

/** The capped exponential delay before retry number `attempt` (0-based), without jitter. */
export function backoffDelay(
  attempt: number,
  { initial, max, factor = 2 }: { initial: number; max: number; factor?: number },
): number {
  return Math.min(max, initial * factor ** attempt);
}
