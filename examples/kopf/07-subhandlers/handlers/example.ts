// Kopf's 07-subhandlers: a handler that decides at run time which handlers to run, one per
// `spec.items` entry, each tracked by the framework as a handler of its own (`create_fn/item1`:
// its own progress record, retries and outcome). As Kopf's, the sub-handlers print their line.
import { Registry } from "kobun";
import { KopfExamples } from "../../kopf.ts";

export const registry = new Registry();
const { on } = registry;

on.create(KopfExamples, (ctx) => {
  for (const item of ctx.spec.items ?? []) {
    ctx.subhandler(item, ({ logger }) => {
      logger.info(`=== Handling creation for ${item}. ===`);
    });
  }
}, { id: "create_fn" });
