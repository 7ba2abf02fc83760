// Sub-handlers across a SIGKILL (scenarios.e2e.ts): with KOBUN_E2E_ITEMS set, `items_fn` on
// ConfigMaps labelled `e2e.kobun.dev/items` registers one sub-handler per `data.items` entry
// (comma-separated); the one named by `data.failing` fails temporarily `data.failTimes` times,
// `data.delay` seconds apart. Each attempt is logged ("items_fn/<item> attempt retry=N"), and
// each success leaves an annotation `e2e.kobun.dev/item-<item>: retry=N` through ctx.patch.
// Progress is kept in annotations (a ConfigMap has no status). Without the variable nothing is
// registered, so the other e2e files see no handler on ConfigMaps.

import { on, TemporaryError, type HandlerContext } from "kobun";

function items_fn(ctx: HandlerContext): void {
  const data: Record<string, string> = (ctx.body as { data?: Record<string, string> }).data ?? {};
  const failTimes = Number(data.failTimes ?? 0);
  const delay = Number(data.delay ?? 0.3);
  ctx.logger.info(`items_fn call retry=${ctx.retry} of ${ctx.name}`);
  for (const item of (data.items ?? "").split(",").filter(Boolean)) {
    ctx.subhandler(item, (sub) => {
      sub.logger.info(`items_fn/${item} attempt retry=${sub.retry} of ${sub.name}`);
      if (item === data.failing && sub.retry < failTimes) {
        throw new TemporaryError(`item ${item}: attempt ${sub.retry} fails on purpose`, { delay });
      }
      sub.patch.metadata.annotations = { ...sub.patch.metadata.annotations, [`e2e.kobun.dev/item-${item}`]: `retry=${sub.retry}` };
    });
  }
}

if (process.env.KOBUN_E2E_ITEMS) {
  on.create("v1/configmaps", items_fn, { id: "items_fn", labels: { "e2e.kobun.dev/items": "yes" } });
}
