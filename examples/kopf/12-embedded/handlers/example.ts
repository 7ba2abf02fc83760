// Kopf's 12-embedded: the operator runs inside an application of its own (here `app.ts`), which
// starts it, waits until it is ready, does its work, and stops it. The handlers read their message
// templates from the operator's memo, which the application provides.
import { Registry } from "kobun";
import { Journal, KopfExamples } from "../../kopf.ts";

export const registry = new Registry();
const { on } = registry;
export const journal = new Journal();

/** Fills `{name}` and the like from the handler's context. */
const format = (template: string, ctx: Record<string, unknown>) =>
  template.replace(/\{(\w+)\}/g, (_, key: string) => String(ctx[key]));

on.create(KopfExamples, (ctx) => journal.write(format(ctx.memo.createTemplate, { ...ctx })), { id: "create_fn" });
on.delete(KopfExamples, (ctx) => journal.write(format(ctx.memo.deleteTemplate, { ...ctx })), { id: "delete_fn" });
