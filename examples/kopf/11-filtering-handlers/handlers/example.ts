// Kopf's 11-filtering-handlers: which objects a handler sees, by labels, annotations, a `when`
// function, and a field's value; an update handler for one change of a field; a daemon that runs
// only while a field has a value.
// Written as Kopf's: label and annotation callbacks get the value and the handler's context;
// `field`/`value` on creation handlers and on the daemon; `field`/`old`/`new` on an update handler.
import { ABSENT, PRESENT, Registry, sleep, type Logger } from "kobun";
import { KopfExamples } from "../../kopf.ts";

export const registry = new Registry();
const { on } = registry;
const say = (line: string) => ({ logger }: { logger: Logger }) => logger.info(line);

on.create(KopfExamples, say("Label is matching."), { id: "labels_matching", labels: { somelabel: "somevalue" } });
on.create(KopfExamples, say("Label is present."), { id: "labels_present", labels: { somelabel: PRESENT } });
on.create(KopfExamples, say("Label is absent."), { id: "labels_absent", labels: { nonexistent: ABSENT } });
on.create(KopfExamples, say("Label callback matching."), {
  id: "labels_callback_matching",
  labels: { somelabel: (value, { spec }) => value === "somevalue" && spec.field !== undefined },
});

on.create(KopfExamples, say("Annotation is matching."), {
  id: "annotations_matching", annotations: { someannotation: "somevalue" },
});
on.create(KopfExamples, say("Annotation is present."), {
  id: "annotations_present", annotations: { someannotation: PRESENT },
});
on.create(KopfExamples, say("Annotation is absent."), { id: "annotations_absent", annotations: { nonexistent: ABSENT } });
on.create(KopfExamples, say("Annotation callback mismatch."), {
  id: "annotations_callback_matching",
  annotations: {
    someannotation: (value, { spec }) => value === "somevalue" && spec.field === "not-this-value-for-sure",
  },
});

on.create(KopfExamples, say("Filter satisfied."), { id: "filter_satisfied", when: () => true });
on.create(KopfExamples, say("Filter not satisfied."), { id: "filter_not_satisfied", when: () => false });

on.create(KopfExamples, say("Field value is satisfied."), {
  id: "field_value_satisfied", field: "spec.field", value: "value",
});
on.create(KopfExamples, say("Field value is not satisfied."), {
  id: "field_value_not_satisfied", field: "spec.field", value: "something-else",
});
on.create(KopfExamples, say("Field presence is satisfied."), { id: "field_presence_satisfied", field: "spec.field" });
on.create(KopfExamples, say("Field presence is not satisfied."), {
  id: "field_presence_not_satisfied", field: "spec.inexistent",
});

on.update(KopfExamples, say("Field change is satisfied."), {
  id: "update_with_field_change_satisfied", field: "spec.field", old: "value", new: "changed",
});

on.daemon(KopfExamples, async ({ logger, signal }) => {
  while (!signal.aborted) {
    logger.info("Field daemon is satisfied.");
    await sleep(1, signal);
  }
  logger.info("Field daemon has stopped.");
}, { id: "daemon_with_field", field: "spec.field", value: "value" });
