// Kopf's 09-testing: the operator is trivial (it logs one line); the example is its test,
// which runs the whole operator in-process as Kopf's KopfRunner does.
import { Registry } from "kobun";
import { KopfExamples } from "../../kopf.ts";

export const registry = new Registry();
const { on } = registry;

on.create(KopfExamples, ({ logger }) => {
  logger.info("Something was logged here.");
}, { id: "create_fn" });
