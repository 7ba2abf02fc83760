// The retry options every retried kind takes (handlers, daemons, timers, on.startup), checked
// alike at registration: a wrong value would otherwise be taken silently for the default.

/** What `errors` may be: what an error other than TemporaryError/PermanentError means. */
export const ERROR_MODES: readonly unknown[] = ["temporary", "permanent", "ignored"];

/** Throws an Error starting with `where` for a `retries` that is no whole number ≥ 1 or an unknown `errors`. */
export function checkRetrying(where: string, options: { retries?: unknown; errors?: unknown } | undefined): void {
  const retries = options?.retries;
  if (retries !== undefined && !(Number.isInteger(retries) && (retries as number) >= 1)) {
    throw new Error(`${where}: retries must be a whole number ≥ 1 (attempts), not ${JSON.stringify(retries)}`);
  }
  if (options?.errors !== undefined && !ERROR_MODES.includes(options.errors)) {
    const modes = `"temporary", "permanent" or "ignored"`;
    throw new Error(`${where}: errors must be ${modes}, not ${JSON.stringify(options.errors)}`);
  }
}

/**
 * Throws an Error starting with `where` for a `backoff` that is no number of seconds ≥ 0, or a `timeout` that is
 * none > 0 (0 would fail the call before it starts).
 */
export function checkBackoffAndTimeout(where: string, options: { backoff?: unknown; timeout?: unknown }): void {
  const { backoff, timeout } = options;
  if (backoff !== undefined && !((backoff as number) >= 0)) {
    throw new Error(`${where}: backoff must be a number of seconds ≥ 0`);
  }
  if (timeout !== undefined && !((timeout as number) > 0)) {
    throw new Error(`${where}: timeout must be a number of seconds > 0 (leave it out for none)`);
  }
}
