// supervise(): the one loop every long-running watch consumer runs in. It opens the stream,
// hands each item on, and when the stream fails, reports it, backs off and opens it again;
// it never leaves a consumer silently dead while the process looks alive. Aborting `signal`
// ends it at once (the backoff's sleep too). What a failure means (a 403 that ends the
// operator, a resource that is gone) is the caller's: `failed` may throw, or say "stop".

import { linkedSignal, sleep } from "./abort.ts";

/** The delays between attempts: util/backoff.ts's Backoff, or a fixed period. */
export interface Delays {
  next(): number;
  reset(): void;
}

export interface Supervision<T> {
  /** Opens the stream afresh for each attempt, with the attempt's signal. */
  open(signal: AbortSignal): AsyncIterable<T>;
  /** Each item, in order; must not block (the queue behind it decides). */
  each(item: T): void;
  delays: Delays;
  /**
   * A failed attempt (not an abort): report it. `first`: the first failure since items flowed
   * again. Throw to end the supervision with that error; return "stop" to end it quietly.
   */
  failed(error: unknown, retry: { delayMs: number; first: boolean }): void | "stop";
  /** Items flow again after a failure. */
  recovered?(): void;
  /** Before each attempt: wait until it may run (a freeze gate); false ends the supervision. */
  ready?(signal: AbortSignal): Promise<boolean>;
  /** More signals that end one attempt (not the supervision), taken afresh for each attempt. */
  attemptSignals?(): (AbortSignal | undefined)[];
  /** Each attempt's stream ended, however it did (before its failure is reported). */
  ended?(): void;
}

/** Runs until `signal` aborts, or `failed` ends it. */
export async function supervise<T>(supervision: Supervision<T>, signal: AbortSignal): Promise<void> {
  const { open, each, delays } = supervision;
  let failing = false;
  while (!signal.aborted) {
    if (supervision.ready && !(await supervision.ready(signal))) return;
    const attempt = linkedSignal(signal, ...(supervision.attemptSignals?.() ?? []));
    try {
      try {
        for await (const item of open(attempt.signal)) {
          if (failing) {
            failing = false;
            supervision.recovered?.();
          }
          each(item);
        }
      } finally {
        supervision.ended?.();
      }
    } catch (error) {
      if (attempt.signal.aborted) continue;
      const delayMs = delays.next();
      if (supervision.failed(error, { delayMs, first: !failing }) === "stop") return;
      failing = true;
      await sleep(delayMs, signal);
    } finally {
      attempt.dispose();
    }
  }
}
