// Kopf's 03-exceptions: how each kind of error is treated. A PermanentError fails the handler at
// once; a TemporaryError is retried after its delay; any other error is retried after `backoff`
// until `retries` attempts were made, or fails at once with `errors: "permanent"`.
import { PermanentError, Registry, TemporaryError } from "kobun";
import { KopfExamples } from "../../kopf.ts";

export const registry = new Registry();
const { on } = registry;

class MyError extends Error {}

on.create(KopfExamples, () => {
  throw new PermanentError("Fail once and for all.");
}, { id: "instant_failure_with_only_a_message" });

on.create(KopfExamples, ({ retry }) => {
  if (retry < 3) throw new TemporaryError("Expected recoverable error.", { delay: 1 }); // attempts 0, 1, 2 fail
}, { id: "eventual_success_with_a_few_messages" });

on.create(KopfExamples, () => {
  throw new MyError("An error that is supposed to be recoverable.");
}, { id: "eventual_failure_with_tracebacks", retries: 3, backoff: 1 });

on.create(KopfExamples, () => {
  throw new MyError("An error that is supposed to be recoverable.");
}, { id: "instant_failure_with_traceback", errors: "permanent", backoff: 1 });
