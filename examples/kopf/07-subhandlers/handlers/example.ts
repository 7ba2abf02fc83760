// Kopf's 07-subhandlers: a handler that decides at run time which handlers to run, one per
// `spec.items` entry, each tracked by the framework as a handler of its own.
//
// Workaround (issue 33 brings `ctx.subhandler`): a loop inside the one handler. It does the same
// work on success, but the items share one progress record: one failing item retries them all.
import { Registry } from "kobun";
import { Journal, KopfExamples } from "../../kopf.ts";

export const registry = new Registry();
const { on } = registry;
export const journal = new Journal();

on.create(KopfExamples, ({ spec }) => {
  for (const item of spec.items ?? []) {
    // issue 33: ctx.subhandler(item, () => journal.write(...)), with its own id, retries and outcome
    journal.write(`=== Handling creation for ${item}. ===`);
  }
}, { id: "create_fn" });
