// Kopf's 04-events: a handler posts Kubernetes Events about its object: one of any type, the
// Normal and Warning shortcuts, and one for a caught exception.
//
// Workarounds (issue 33 adds the native forms, marked "issue 33" below):
// - an Event of a custom type ("SomeType"): `ctx.event` posts Normal or Warning only; posted as Normal;
// - `kopf.exception(...)`: no exception helper; posted as a Warning with the error's message.
import { Registry } from "kobun";
import { KopfExamples } from "../../kopf.ts";

export const registry = new Registry();
const { on } = registry;

on.create(KopfExamples, ({ body, event }) => {
  event.info(body, "SomeReason", "Some message"); // issue 33: a custom type, e.g. "SomeType"

  event.info(body, "SomeReason", "Some message");
  event.warn(body, "SomeReason", "Some message");

  try {
    throw new Error("Exception text.");
  } catch (error) {
    // issue 33: event.exception(error), which posts the error's class and message
    event.warn(body, "SomeReason", `Some exception: ${(error as Error).message}`);
  }
}, { id: "create_fn" });
