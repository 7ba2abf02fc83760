// Kopf's 15-timers: two timers per object, each called every few seconds, but only once the
// object has been left unchanged for a while (`idle`). Each logs its ping, as Kopf's.
import { Registry } from "kobun";
import { KopfExamples } from "../../kopf.ts";

/** Registers the timers with Kopf's seconds times `scale` (a test runs them faster). */
export function timers(registry: Registry, scale = 1): Registry {
  registry.on.timer(KopfExamples, ({ spec, logger }) => {
    logger.info(`Ping from a sync timer: field=${JSON.stringify(spec.field)}`);
  }, { id: "every_few_seconds_sync", idle: 5 * scale, interval: 2 * scale });

  registry.on.timer(KopfExamples, async ({ spec, logger }) => {
    logger.info(`Ping from an async timer: field=${JSON.stringify(spec.field)}`);
  }, { id: "every_few_seconds_async", idle: 10 * scale, interval: 4 * scale });
  return registry;
}

export const registry = timers(new Registry());
