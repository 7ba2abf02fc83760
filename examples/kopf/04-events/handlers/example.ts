// Kopf's 04-events: a handler posts Kubernetes Events about its object: one of any type, the
// Normal and Warning shortcuts, and one for a caught exception (Kopf's `kopf.event(type=...)`,
// `kopf.info`, `kopf.warn`, `kopf.exception` are `event.post`, `event.info`, `event.warn`, `event.exception`).
import { Registry } from "kobun";
import { KopfExamples } from "../../kopf.ts";

export const registry = new Registry();
const { on } = registry;

on.create(KopfExamples, ({ body, event }) => {
  // The all-purpose one, of any type.
  event.post("SomeType", body, "SomeReason", "Some message");

  event.info(body, "SomeReason", "Some message");
  event.warn(body, "SomeReason", "Some message");

  try {
    throw new Error("Exception text.");
  } catch (error) {
    // Kopf posts it as type "Error"; kobun's default is "Warning" (Kubernetes' two types), so it is asked here.
    event.exception(error, body, { reason: "SomeReason", message: "Some exception:", type: "Error" });
  }
}, { id: "create_fn" });
