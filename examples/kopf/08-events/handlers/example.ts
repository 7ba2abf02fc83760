// Kopf's 08-events: raw watch-event handlers. They see every event of every object, keep no
// state and are never retried; one that throws does not stop the others.
import { Registry } from "kobun";
import { KopfExamples } from "../../kopf.ts";

export const registry = new Registry();
const { on } = registry;

on.event(KopfExamples, () => {
  throw new Error("Oops!");
}, { id: "event_fn_with_error" });

on.event(KopfExamples, ({ type, name, logger }) => {
  logger.info(`Event received: ${type} ${name}`);
}, { id: "normal_event_fn" });
