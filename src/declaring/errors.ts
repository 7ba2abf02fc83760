// The errors a handler throws to tell kobun what a failure means (after Kopf's
// TemporaryError / PermanentError). Anything else thrown follows the handler's `errors` option.
// Must never carry behaviour: the engine (handling/runner.ts) decides what they lead to.

/** Retry this handler after `delay` seconds (default: the handler's backoff). */
export class TemporaryError extends Error {
  override readonly name = "TemporaryError";
  /** Seconds until the retry; undefined = the handler's `backoff`. */
  readonly delay: number | undefined;
  /** A `delay` that is not a finite number of seconds (`"30s"`, NaN) is refused here, a TypeError naming it. */
  constructor(message: string, options: { delay?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    const delay = options.delay;
    if (delay !== undefined && (typeof delay !== "number" || !Number.isFinite(delay))) {
      const shown = typeof delay === "string" ? JSON.stringify(delay) : String(delay);
      throw new TypeError(
        `TemporaryError ${JSON.stringify(message)}: delay must be a finite number of seconds, not ${shown}`,
      );
    }
    this.delay = delay;
  }
}

/** Do not retry: the handler has failed for good; the failure is recorded and reported. */
export class PermanentError extends Error {
  override readonly name: string = "PermanentError";
}

/** The handler ran past its `timeout` (seconds, counted from its first attempt). */
export class HandlerTimeoutError extends PermanentError {
  override readonly name = "HandlerTimeoutError";
}

/** The handler failed `retries` times. */
export class HandlerRetriesError extends PermanentError {
  override readonly name = "HandlerRetriesError";
}
