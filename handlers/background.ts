// Daemons, timers and an index: read it after example.ts.
//
// A KobunExample labelled `kobun.dev/example=heartbeat` is watched by three helpers:
//  - a daemon, one long-running function per object, that stops when its `signal` aborts (the
//    object deleted or no longer labelled, the operator frozen by a peer, or shutting down);
//  - a timer, called every 10 s while the object exists, whose result goes to
//    status.heartbeat_timer like a handler's;
//  - an index of all KobunExamples by `spec.team`, which any handler (of any resource) reads
//    as `ctx.indexes.examples_by_team`.
//
//   kubectl apply -f handlers/kobunexample.crd.yaml
//   kubectl apply -f - <<<'{"apiVersion":"kobun.dev/v1","kind":"KobunExample","metadata":{"name":"beat","labels":{"kobun.dev/example":"heartbeat"}},"spec":{"team":"blue"}}'
//   kubectl get kex beat -o jsonpath='{.status.heartbeat_timer}'   # {"beats":N,"team":["beat"]}
//   kubectl delete kex beat            # the daemon and the timer stop first, then it goes
//
// KobunExamples without the label are left to example.ts alone.

import { on, sleep, type DaemonContext, type TimerContext } from "kobun";

const EXAMPLES = "kobunexamples.kobun.dev/v1";
const HEARTBEAT = { "kobun.dev/example": "heartbeat" };

// A daemon is for work that never ends by itself (a connection to keep, a stream to follow).
// It must honour `signal`: past `cancellationTimeout` (seconds) after the abort it is abandoned
// and named in a warning. One that throws is restarted after `backoff`; one that returns is not.
on.daemon(EXAMPLES, async ({ name, signal, logger, memo }: DaemonContext) => {
  logger.info(`heartbeat daemon started on ${name}`);
  memo.beats = 0;
  // Wakes every 5 s until the object goes away; the memo is shared with the timer below.
  // kobun's sleep() ends early (false) when `signal` aborts, and follows a test's virtual clock.
  while (await sleep(5, signal)) memo.beats++;
  logger.info(`heartbeat daemon stopped on ${name}`);
}, { id: "heartbeat_daemon", labels: HEARTBEAT, cancellationTimeout: 5 });

// A timer is for periodic checks: `interval` seconds apart (`sharp: true` keeps a fixed
// schedule, `idle: 60` waits until the object is unchanged for a minute). Errors and retries
// follow the handler rules (TemporaryError, PermanentError, `backoff`).
on.timer(EXAMPLES, ({ spec, memo, indexes }: TimerContext) => {
  const team = typeof spec.team === "string" ? indexes.examples_by_team!.get(spec.team) : [];
  return { beats: memo.beats ?? 0, team };
}, { id: "heartbeat_timer", labels: HEARTBEAT, interval: 10, initialDelay: 1 });

// An index: for each object, the keys it files itself under (or nothing). It is kept from the
// watch stream, updated before the handlers of the same event, and rebuilt by a relist.
on.index(EXAMPLES, ({ name, spec }) => (typeof spec.team === "string" ? { [spec.team]: name } : undefined), { id: "examples_by_team" });
