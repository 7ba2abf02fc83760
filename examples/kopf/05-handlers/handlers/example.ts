// Kopf's 05-handlers: every cause, two handlers for some, run in the order they were registered;
// a field handler sees the field's old and new values.
import { Registry } from "kobun";
import { Journal, KopfExamples } from "../../kopf.ts";

export const registry = new Registry();
const { on } = registry;
/** What the handlers print in Kopf's example. */
export const journal = new Journal();

on.resume(KopfExamples, () => journal.write("RESUMED 1st"), { id: "resume_fn_1" });
on.create(KopfExamples, () => journal.write("CREATED 1st"), { id: "create_fn_1" });
on.resume(KopfExamples, () => journal.write("RESUMED 2nd"), { id: "resume_fn_2" });
on.create(KopfExamples, () => journal.write("CREATED 2nd"), { id: "create_fn_2" });

on.update(KopfExamples, ({ diff }) => {
  journal.write(`UPDATED ${diff.map((d) => `${d.op} ${d.path.join(".")}`).join(", ")}`);
}, { id: "update_fn" });

on.delete(KopfExamples, () => journal.write("DELETED 1st"), { id: "delete_fn_1" });
on.delete(KopfExamples, () => journal.write("DELETED 2nd"), { id: "delete_fn_2" });

on.field(KopfExamples, { field: "spec.field", id: "field_fn" }, ({ old, new: now }) => {
  journal.write(`FIELD CHANGED: ${old} -> ${now}`);
});
