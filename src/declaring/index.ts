// declaring/: what an operator author declares, and nothing that runs it. Each kind of handler in
// one file of kinds/ (its context and options, its spec and the checks of it, its `on.*` functions);
// the registry, which keeps the specs and joins the kinds' `on.*`; the `On` face (on.ts); what every
// kind shares (types.ts, registration.ts); resource tokens and `defineResource`, filters, aliases,
// errors, handler time (`now`, `sleep`: util/'s clock), and the interfaces a handler sees of
// `ctx.api` and `ctx.indexes` (handling/ implements them). It imports only kube/ (types,
// selectors, kinds) and util/. Must never import an engine (handling/, reconciling/, admission/,
// runtime/...), never do I/O, and never run a handler: registering checks options and records,
// nothing more.

export {
  on, registry, Registry, type HandlerSpec, type WebhookSpec, type ConversionSpec, type BackgroundSpec,
} from "./registry.ts";
export type { On, Target } from "./on.ts";
export {
  resource, type ResourceToken, type TokenOptions, type ObjectOf, type ReconcileTarget, type TargetObject,
} from "./resource.ts";
export {
  defineResource, type ResourceDefinition, type DefinedObject, type DefinedToken,
  type VersionSchema, type VersionedDefinition, type VersionedToken,
} from "./definition.ts";
export type { PrinterColumn } from "./crd.ts";
// Each kind of handler (kinds/): what it sees and takes, and the spec the registry keeps of it.
export {
  AdmissionError, type AdmissionContext, type AdmissionRequest, type AdmissionOperation, type AdmissionOptions,
  type AdmissionPeer, type ValidateFn, type MutateFn, type ConvertFn, type ConversionTable, type JsonPatchOperation,
} from "./kinds/webhooks.ts";
export type {
  Cause, HandlerContext, EventContext, FieldContext, HandlerFn, EventHandlerFn, FieldHandlerFn, HandlerOptions,
  SubhandlerOptions, DeleteOptions, FieldOptions, UpdateOptions, EventOptions,
} from "./kinds/handlers.ts";
export type {
  DaemonContext, TimerContext, DaemonFn, TimerFn, BackgroundOptions, DaemonOptions, TimerOptions,
} from "./kinds/background.ts";
export type { IndexFn, IndexOptions } from "./kinds/indexing.ts";
export type { ActivityContext, ActivityFn, ActivityOptions, LoginContext, LoginFn } from "./kinds/activities.ts";
export { PermanentError, TemporaryError, HandlerTimeoutError, HandlerRetriesError } from "./errors.ts";
export {
  PRESENT, ABSENT, type ValueMatcher, type MetaMatcher, type MetaMatchers, type ObjectFilters,
} from "./filters.ts";
export { FINALIZER, BASE_ANNOTATION } from "./keys.ts";
export { ERROR_MODES } from "./kinds/retrying.ts";
export { now, sleep } from "./time.ts";
export type { Index, IndexEntries, IndexKey } from "./indexes.ts";
export type { Api, ApiWatchEvent, Call, ResourceRef, Where } from "./api.ts";
export {
  adopt, appendOwnerReference, label, removeOwnerReference, type AdoptOptions, type LabelOptions,
  type OwnerReferenceOptions,
} from "./children.ts";
export {
  conditions, PATCH_OBJECT, type Condition, type ConditionInput, type ConditionsSchema, type SetConditionOptions,
} from "./conditions.ts";
// What every per-object handler sees, whatever its kind.
export type {
  Diff, DiffItem, Patch, MergePatch, SpecOf, StatusOf, FieldPath, ValueAt, ObjectContext,
} from "./types.ts";
export type { EventRecorder, ExceptionEventOptions } from "./event-types.ts";
export type { LoginCredentials, LoginResult } from "../kube/index.ts";
// The bodies handlers receive and the resources they are registered for.
export type { KubeObject, ObjectMeta, Resource } from "../kube/index.ts";
// What ctx.api throws and returns: the server's Status, apply conflicts, the built-in kinds.
export { ApiError, ApplyConflictError } from "../kube/index.ts";
export type {
  ConfigMap, Secret, Namespace, ServiceAccount, Event, Pod, Service, PersistentVolumeClaim, Deployment, StatefulSet,
  DaemonSet, ReplicaSet, Job, CronJob, Ingress, NetworkPolicy, PodDisruptionBudget, HorizontalPodAutoscaler, Lease,
  CustomResourceDefinition, KindOf, Wire,
} from "../kube/index.ts";
export {
  deepEqual, fieldPath, filtersPass, getField, matchAny, matchMeta, matchValue, type ContextOf,
} from "./filters.ts";
export { KOBUN_PREFIX, progressAnnotation, STATUS_KEY } from "./keys.ts";
export { metadataDeclarations } from "./metadata-only.ts";
export { RegistrationError, selectorMatches } from "./registration.ts";
export type { ActivitySpec, IndexSpec } from "./registry.ts";
export {
  reconcileSpecOf, type Cache, type CacheListOptions, type ObjectKey, type ReconcileContext, type ReconcileFn,
  type ReconcileOptions, type ReconcileResult, type ReconcileSpec, type WatchedResource, type MapTools,
} from "./kinds/reconcile.ts";
