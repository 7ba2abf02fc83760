// e2e-only handlers, built into dist/kobun-e2e by test/e2e/run.ts
// (`bun run build.ts --handlers test/e2e/handlers --outfile dist/kobun-e2e`).
//
// KobunFlaky / KobunFlakyStatus objects (kobunflakies / kobunflakystatuses .e2e.kobun.dev/v1): `flaky_fn` fails temporarily while
// its retry counter is below `spec.failTimes`, `spec.delay` seconds apart, then succeeds with
// the attempt it succeeded on and when the first attempt started. The progress record
// (`kobun.dev/flaky_fn` annotation, or status.kobun.progress.flaky_fn) must carry the retry count across an operator restart.
//
// This binary handles no KobunExample: the peering scenario runs it as the higher-priority
// peer, so any KobunExample handled while it runs was handled by a frozen operator (a bug).

import { on, TemporaryError, type HandlerContext } from "kobun";

function flaky_fn(ctx: HandlerContext): unknown {
  const failTimes = Number(ctx.spec.failTimes ?? 0);
  const delay = Number(ctx.spec.delay ?? 0.3);
  ctx.logger.info(`flaky_fn attempt retry=${ctx.retry} of ${ctx.name}`);
  if (ctx.retry < failTimes) {
    throw new TemporaryError(`flaky_fn: attempt ${ctx.retry} fails on purpose (${failTimes} to fail)`, { delay });
  }
  return { retry: ctx.retry, started: ctx.started.toISOString() };
}

for (const resource of ["kobunflakies.e2e.kobun.dev/v1", "kobunflakystatuses.e2e.kobun.dev/v1"]) {
  on.create(resource, flaky_fn, { id: "flaky_fn" });
}
