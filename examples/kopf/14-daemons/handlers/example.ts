// Kopf's 14-daemons: two daemons per object. Each fails three times (a TemporaryError, retried
// after its delay) before it runs; then it pings until it is stopped (the object's deletion,
// the operator's shutdown) or, for the first, for 30 s. The first writes its progress to the
// object's status through `ctx.patch`; the second runs only for objects with a given annotation.
//
// Kopf's first daemon is sync (in a thread, it polls its `stopped` flag): here it waits on
// `ctx.stopped`, which aborts as soon as the daemon is asked to stop. The second is async (Kopf
// cancels it `cancellation_backoff` seconds after asking): here it waits on `ctx.signal`, which
// aborts `cancellationBackoff` seconds after `ctx.stopped`.
import { Registry, TemporaryError, sleep } from "kobun";
import { KopfExamples } from "../../kopf.ts";

export const registry = new Registry();
const { on } = registry;
/** Seconds: the retries' delay (Kopf's 1), between pings (5), the first daemon's run (30); a test shortens them. */
export const timing = { retryDelay: 1, ping: 5, accompany: 30 };

on.daemon(KopfExamples, async (ctx) => {
  const { retry, stopped, patch, logger } = ctx;
  if (retry < 3) {
    patch.status.message = `Failed ${retry + 1} times.`;
    throw new TemporaryError("Simulated failure.", { delay: timing.retryDelay });
  }
  const started = performance.now();
  while (!stopped.aborted && performance.now() - started <= timing.accompany * 1000) {
    logger.info(`=> Ping from a sync daemon: field=${JSON.stringify(ctx.spec.field)}, retry=${retry}`); // a live spec
    await sleep(timing.ping, stopped);
  }
  if (stopped.aborted) return logger.info("'background_sync' is stopped");
  patch.status.message = "Accompanying is finished.";
}, { id: "background_sync", backoff: 3 });

on.daemon(KopfExamples, async (ctx) => {
  const { retry, signal, logger } = ctx;
  if (retry < 3) throw new TemporaryError("Simulated failure.", { delay: timing.retryDelay });
  while (!signal.aborted) {
    logger.info(`=> Ping from an async daemon: field=${JSON.stringify(ctx.spec.field)}`);
    await sleep(timing.ping, signal);
  }
  logger.info("'background_async' is stopped");
}, {
  id: "background_async", backoff: 3, cancellationBackoff: 1, cancellationTimeout: 0.5,
  annotations: { someannotation: "somevalue" },
});
