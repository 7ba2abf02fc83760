// handling/: the public handler API (`on.*`, errors, filters) and the engine of one cycle: which cause
// (selection.ts), which handlers, run them with retries/timeouts/progress (runner.ts), and plan
// ONE merged patch per cycle (cycle.ts). Imports kube/, posting/, util/. The per-object loop
// that feeds it, and the writing of the plans, are reconciling/'s.
// Must never write a plan itself (reconciling/ does), nor watch or queue anything of its own: its one
// use of kube/'s client is ctx.api (api.ts), the requests a handler makes.

export { on, registry, Registry, type On, type Target, type HandlerSpec, type WebhookSpec, type ConversionSpec, type BackgroundSpec } from "./registry.ts";
export { resource, type ResourceToken, type TokenOptions, type ObjectOf, type Wire } from "./resource.ts";
export { defineResource, type ResourceDefinition, type DefinedObject, type DefinedToken, type PrinterColumn, type VersionSchema, type VersionedDefinition, type VersionedToken } from "./definition.ts";
export {
  AdmissionError, type AdmissionContext, type AdmissionRequest, type AdmissionOperation, type AdmissionOptions,
  type ValidateFn, type MutateFn, type ConvertFn, type ConversionTable, type JsonPatchOperation,
} from "./webhooks.ts";
export { PermanentError, TemporaryError, HandlerTimeoutError, HandlerRetriesError } from "./errors.ts";
export { PRESENT, ABSENT, type ValueMatcher, type MetaMatchers } from "./filters.ts";
export { FINALIZER, BASE_ANNOTATION } from "./progress.ts";
export { Indexes, type Index } from "./indexes.ts";
export { ApiClient, type Api, type ApiWatchEvent, type ResourceRef } from "./api.ts";
export { adopt, type AdoptOptions } from "./children.ts";
export { conditions, type Condition, type ConditionInput, type SetConditionOptions } from "./conditions.ts";
export type {
  Cause,
  Diff,
  DiffItem,
  Patch,
  MergePatch,
  SpecOf,
  StatusOf,
  FieldPath,
  ValueAt,
  FieldContext,
  FieldHandlerFn,
  HandlerContext,
  EventContext,
  HandlerFn,
  EventHandlerFn,
  HandlerOptions,
  DeleteOptions,
  FieldOptions,
  EventOptions,
  EventRecorder,
  ObjectContext,
  DaemonContext,
  TimerContext,
  DaemonFn,
  TimerFn,
  DaemonOptions,
  TimerOptions,
  IndexFn,
  IndexOptions,
  ActivityContext,
  ActivityFn,
  ActivityOptions,
  LoginContext,
  LoginFn,
} from "./types.ts";
export type { LoginCredentials, LoginResult } from "../kube/login.ts";
// The bodies handlers receive and the resources they are registered for.
export type { KubeObject, ObjectMeta, Resource } from "../kube/types.ts";
// What ctx.api throws and returns: the server's Status, apply conflicts, the built-in kinds.
export { ApiError, ApplyConflictError } from "../kube/errors.ts";
export type { ConfigMap, Secret, Namespace, ServiceAccount, Event, Pod, Service, Deployment, StatefulSet, Job, Lease, KindOf } from "../kube/kinds.ts";
