// Watch streams that cannot open because the connection budget is spent are a health
// problem: their objects go unseen while the process looks alive. One log line when streams
// start waiting and one when none waits any more; /healthz names the numbers meanwhile.

import type { StreamBudget } from "../kube/index.ts";
import type { Health } from "../observability/index.ts";
import { aborted } from "../util/index.ts";
import type { Logger } from "../util/index.ts";

export const STARVED_COMPONENT = "watch streams";

export interface StarvationReport {
  budget: StreamBudget;
  health: Health;
  logger: Logger;
}

/** Runs until `signal` aborts. */
export async function reportStarvedStreams(options: StarvationReport, signal: AbortSignal): Promise<void> {
  const { budget, health, logger } = options;
  let starved = false;
  // Its problem ends with this task (the operator's life).
  const component = health.component(STARVED_COMPONENT, signal);
  const off = budget.onChange(({ open, waiting, limit }) => {
    if (waiting === 0) {
      if (!starved) return;
      starved = false;
      component.clear();
      logger.info("every watch stream has a connection again", { open, limit });
      return;
    }
    component.fail(
      `${waiting} watch streams cannot open: ${open} of at most ${limit} are open ` +
        `(Bun allows ${budget.slots} requests per process; ` +
        "lower watching.clusterWideAbove, or raise BUN_CONFIG_MAX_HTTP_REQUESTS in the environment)",
    );
    if (starved) return;
    starved = true;
    logger.warn("watch streams are waiting for a connection: their objects are not seen", {
      waiting, open, limit,
      hint: "lower watching.clusterWideAbove, or raise BUN_CONFIG_MAX_HTTP_REQUESTS in the process environment",
    });
  });
  try {
    await aborted(signal);
  } finally {
    off();
  }
}
