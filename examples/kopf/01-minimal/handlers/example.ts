// Kopf's 01-minimal: one creation handler; what it returns becomes the object's status.
import { Registry } from "kobun";
import { KopfExamples } from "../../kopf.ts";

/** The handlers of this example (a project of its own would use the global `on`). */
export const registry = new Registry();
const { on } = registry;

on.create(KopfExamples, ({ spec, logger }) => {
  logger.info(`And here we are! Creating: ${JSON.stringify(spec)}`);
  return { message: "hello world" }; // → status.create_fn
}, { id: "create_fn" });
