// The graceful shutdown of what operate() started: streams, peering and handlers are aborted
// together, handlers get the grace period, and the Events still queued are sent alongside them.
// Apart from operator.ts because its timings (the flush window, peering's exit) are its own.

import type { Settings } from "../config/index.ts";
import type { Resource } from "../kube/index.ts";
import type { EventPoster } from "../posting/index.ts";
import type { Reconciler } from "../reconciling/index.ts";
import type { Logger, TaskScope } from "../util/index.ts";

/** Time peering gets, after the handlers' grace period, to remove its record or release the lease. */
const PEERING_EXIT_MS = 2500;
/**
 * Time the Events still queued get at least, from the start of the shutdown: they are sent while
 * the handlers finish. Events are best-effort: the shutdown does not wait on them; the rest is dropped.
 */
const EVENT_FLUSH_MS = 10;
/** How often the queue is looked at while handlers close (each look is a no-op when it is empty). */
const FLUSH_POLL_MS = 5;

/** What shutDown() closes, and what it calls once the handlers finished; it returns run()'s report. */
export interface Stopping {
  settings: Settings;
  logger: Logger;
  graceMs: number;
  /** The operator's task scope: streams and peering. */
  scope: TaskScope;
  reconcilers: Map<Resource, Reconciler>;
  poster: EventPoster;
  /** Lets peering leave: no other operator starts on objects still handled here. */
  handlersFinished: () => void;
}

/**
 * Streams, peering and handlers are aborted together: watches close at once, handlers get
 * the grace period through their `signal`, peering removes its record meanwhile (after the
 * handlers finished: `handlersFinished`). The poster sends queued Events meanwhile, for
 * EVENT_FLUSH_MS or until the handlers finished, whichever is later (after a burst the queue
 * is long: flushing only once the handlers finished put the whole window on top of their close).
 */
export async function shutDown(
  { settings, logger, graceMs, scope, reconcilers, poster, handlersFinished }: Stopping,
): Promise<{ abandoned: string[] }> {
  logger.info("stopping", { gracePeriod: settings.shutdown.gracePeriod });
  const closing = [...reconcilers.values()].map((p) => p.close(graceMs));
  const handling = Promise.all(closing).finally(() => handlersFinished());
  const posting = flushAlongside(poster, handling, EVENT_FLUSH_MS);
  const [scopeReport, handlerReports] = await Promise.all([scope.close(graceMs + PEERING_EXIT_MS), handling, posting]);
  const report = { abandoned: [...scopeReport.abandoned, ...handlerReports.flatMap((r) => r.abandoned)] };
  for (const task of report.abandoned) {
    logger.warn("abandoned a task that ignored the stop signal past the grace period", { task });
  }
  logger.info("stopped", { abandoned: report.abandoned.length });
  return report;
}

/** Sends what `work` (the cleanup handlers) posts while it runs, and for EVENT_FLUSH_MS at least. */
export function flushWhile(poster: EventPoster, work: Promise<unknown>): Promise<void> {
  return flushAlongside(poster, work, EVENT_FLUSH_MS);
}

/**
 * Sends the poster's queue while `handling` runs — again and again, so what the closing handlers
 * post is sent as they post it (the poster's own loop has stopped with the scope) — until `ms`
 * have passed and the handlers finished: nothing is added after the later of the two, so what
 * they post in their very last moment may be dropped (Events are best-effort).
 */
async function flushAlongside(poster: EventPoster, handling: Promise<unknown>, ms: number): Promise<void> {
  let done = false;
  const finished = handling.then(() => void (done = true), () => void (done = true));
  const window = new AbortController();
  const timer = setTimeout(() => void finished.then(() => window.abort()), ms);
  try {
    // While the handlers close (the window aborts only after they finished).
    while (!done) {
      await poster.flush(window.signal);
      await Promise.race([finished, Bun.sleep(FLUSH_POLL_MS)]);
    }
    // What the last handlers posted, within what is left of the window.
    if (!window.signal.aborted) await poster.flush(window.signal);
  } finally {
    clearTimeout(timer);
  }
}
