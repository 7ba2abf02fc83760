// Today's stand-ins for what issue 33 adds to kobun, shared by the ports that need them. Each use
// is marked "issue 33" where it stands, so that it can be switched to the native API.

import { TemporaryError, type ActivityContext } from "kobun";

/** Resolves after `seconds`, or at once when `signal` aborts. */
export function sleep(seconds: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, seconds * 1000);
    signal?.addEventListener("abort", () => { clearTimeout(timer); resolve(); }, { once: true });
  });
}

/**
 * issue 33: `on.startup` retried on a TemporaryError, with `ctx.retry`. Until then a startup
 * handler retries itself: `fn` is called again after the error's delay (else `delay`), and
 * `onRetry` hears of each temporary failure.
 */
export async function retriedStartup(
  ctx: ActivityContext,
  fn: (ctx: ActivityContext & { retry: number }) => unknown,
  options: { delay: number; onRetry?: (error: TemporaryError) => void },
): Promise<unknown> {
  for (let retry = 0; ; retry++) {
    try {
      return await fn({ ...ctx, retry });
    } catch (error) {
      if (!(error instanceof TemporaryError) || ctx.signal.aborted) throw error;
      options.onRetry?.(error);
      await sleep(error.delay ?? options.delay, ctx.signal);
    }
  }
}
