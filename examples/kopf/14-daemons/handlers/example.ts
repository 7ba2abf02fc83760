// Kopf's 14-daemons: two daemons per object. Each fails three times (a TemporaryError, retried
// after its delay) before it runs; then it pings until it is stopped (the object's deletion,
// the operator's shutdown) or, for the first, for 30 s. The first writes its progress to the
// object's status; the second runs only for objects with a given annotation.
//
// Workarounds (issue 33 adds the native forms, marked "issue 33" below):
// - daemons have no `ctx.patch`: the status is written through `ctx.api` (a write of the object
//   itself, taken as handled: it does not come back as an update);
// - no `cancellationBackoff`: dropped (Kopf waits that long before it cancels an async daemon).
import { Registry, TemporaryError, type DaemonContext } from "kobun";
import { sleep } from "../../workarounds.ts";
import { Journal, KopfExamples, type KopfExample } from "../../kopf.ts";

export const registry = new Registry();
const { on } = registry;
export const journal = new Journal();
/** Seconds: the retries' delay (Kopf's 1), between pings (5), the first daemon's run (30); a test shortens them. */
export const timing = { retryDelay: 1, ping: 5, accompany: 30 };

/** issue 33: `ctx.patch.status.message = message`, written after the daemon's call as a timer's is. */
async function patchStatus({ api, name, namespace }: DaemonContext<KopfExample>, message: string): Promise<void> {
  // The selector, not the KopfExamples token: ctx.api drops a token's namespace (see 10-builtins).
  await api.patch("kopfexamples.kopf.dev", name, { status: { message } }, { namespace, subresource: "status" });
}

on.daemon(KopfExamples, async (ctx) => {
  const { retry, signal, spec } = ctx;
  if (retry < 3) {
    await patchStatus(ctx, `Failed ${retry + 1} times.`);
    throw new TemporaryError("Simulated failure.", { delay: timing.retryDelay });
  }
  const started = performance.now();
  while (!signal.aborted && performance.now() - started <= timing.accompany * 1000) {
    journal.write(`=> Ping from a sync daemon: field=${JSON.stringify(spec.field)}, retry=${retry}`);
    await sleep(timing.ping, signal);
  }
  if (signal.aborted) return journal.write("'background_sync' is stopped");
  await patchStatus(ctx, "Accompanying is finished.");
}, { id: "background_sync", backoff: 3 });

on.daemon(KopfExamples, async ({ retry, signal, spec }) => {
  if (retry < 3) throw new TemporaryError("Simulated failure.", { delay: timing.retryDelay });
  while (!signal.aborted) {
    journal.write(`=> Ping from an async daemon: field=${JSON.stringify(spec.field)}`);
    await sleep(timing.ping, signal);
  }
  journal.write("'background_async' is stopped");
}, { id: "background_async", backoff: 3, cancellationTimeout: 0.5, annotations: { someannotation: "somevalue" } });
