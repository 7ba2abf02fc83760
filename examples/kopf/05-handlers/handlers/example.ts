// Kopf's 05-handlers: every cause, two handlers for some, run in the order they were registered;
// a field handler sees the field's old and new values. Each logs what Kopf's prints.
import { Registry } from "kobun";
import { KopfExamples } from "../../kopf.ts";

export const registry = new Registry();
const { on } = registry;

on.resume(KopfExamples, ({ logger }) => logger.info("RESUMED 1st"), { id: "resume_fn_1" });
on.create(KopfExamples, ({ logger }) => logger.info("CREATED 1st"), { id: "create_fn_1" });
on.resume(KopfExamples, ({ logger }) => logger.info("RESUMED 2nd"), { id: "resume_fn_2" });
on.create(KopfExamples, ({ logger }) => logger.info("CREATED 2nd"), { id: "create_fn_2" });

on.update(KopfExamples, ({ diff, logger }) => {
  logger.info(`UPDATED ${diff.map((d) => `${d.op} ${d.path.join(".")}`).join(", ")}`);
}, { id: "update_fn" });

on.delete(KopfExamples, ({ logger }) => logger.info("DELETED 1st"), { id: "delete_fn_1" });
on.delete(KopfExamples, ({ logger }) => logger.info("DELETED 2nd"), { id: "delete_fn_2" });

on.field(KopfExamples, { field: "spec.field", id: "field_fn" }, ({ old, new: now, logger }) => {
  logger.info(`FIELD CHANGED: ${old} -> ${now}`);
});
