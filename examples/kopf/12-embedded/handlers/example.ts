// Kopf's 12-embedded: the operator runs inside an application of its own (here `app.ts`), which
// starts it, waits until it is ready, does its work, and stops it. The handlers read their message
// templates from the operator's memo, which the application provides (`run({ memo })`).
import { Registry } from "kobun";
import { KopfExamples } from "../../kopf.ts";

export const registry = new Registry();
const { on } = registry;

/** Fills `{name}` and the like from the handler's context, as Python's `str.format(**kwargs)`. */
const format = (template: string, ctx: Record<string, unknown>) =>
  template.replace(/\{(\w+)\}/g, (_, key: string) => String(ctx[key]));

on.create(KopfExamples, (ctx) => ctx.logger.info(format(ctx.memo.createTemplate, { ...ctx })), { id: "create_fn" });
on.delete(KopfExamples, (ctx) => ctx.logger.info(format(ctx.memo.deleteTemplate, { ...ctx })), { id: "delete_fn" });
