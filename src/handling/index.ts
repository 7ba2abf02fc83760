// handling/: the registry and the public handler API (`on.*`, errors, filters), the engine
// that decides causes, runs handlers with retries/timeouts/progress, manages the finalizer,
// and writes one merged patch per cycle. Imports kube/, posting/, util/; the per-object loop
// that feeds it is reconciling/'s.
// Must never talk HTTP except through kube/'s client, nor watch anything itself.

export { on, registry, Registry, type On, type HandlerSpec, type WebhookSpec, type ConversionSpec } from "./registry.ts";
export {
  AdmissionError, type AdmissionContext, type AdmissionRequest, type AdmissionOperation, type AdmissionOptions,
  type ValidateFn, type MutateFn, type ConvertFn, type ConversionTable, type JsonPatchOperation,
} from "./webhooks.ts";
export { PermanentError, TemporaryError, HandlerTimeoutError, HandlerRetriesError } from "./errors.ts";
export { PRESENT, ABSENT, type ValueMatcher, type MetaMatchers } from "./filters.ts";
export { FINALIZER, BASE_ANNOTATION } from "./progress.ts";
export type {
  Cause,
  Diff,
  DiffItem,
  Patch,
  HandlerContext,
  EventContext,
  HandlerFn,
  EventHandlerFn,
  HandlerOptions,
  DeleteOptions,
  FieldOptions,
  EventOptions,
} from "./types.ts";
// The bodies handlers receive and the resources they are registered for.
export type { KubeObject, Resource } from "../kube/types.ts";
