// kobun's public API: what handler modules and embedders import.
//
//   import { on, resource, TemporaryError } from "kobun";
//   interface KobunExample { metadata: ObjectMeta; spec: { field?: string }; status?: { greeting?: string } }
//   const Examples = resource<KobunExample>("kobunexamples.kobun.dev/v1");  // typed ctx.spec/status/patch
//   on.create(Examples, ({ spec, patch }) => { patch.status.greeting = `hello ${spec.field}`; });
//
//   on.create("kobunexamples.kobun.dev/v1", async ({ name, patch }) => {
//     patch.status.greeting = `hello ${name}`;
//     return { message: `hello ${name}` };            // → status.create_fn
//   }, { id: "create_fn" });
//
// Embedding the operator in your own process (signals stay yours):
//
//   import { run, resolveSettings } from "kobun";
//   const stop = new AbortController();
//   process.once("SIGTERM", () => stop.abort());
//   await run({ signal: stop.signal, settings: resolveSettings({ flags: { kubeconfig: "./kubeconfig" } }) });
//
// For tests of your own handlers, `import { startSandbox } from "kobun/sandbox"`.
// Everything else under src/ is internal.

export {
  on, registry, Registry, type On, PermanentError, TemporaryError, RegistrationError, PRESENT, ABSENT,
  resource, defineResource, type ResourceDefinition, type DefinedObject, type DefinedToken, type PrinterColumn,
  type VersionSchema, type VersionedDefinition, type VersionedToken, type ResourceToken, type TokenOptions,
  type ObjectOf, type Target, type MergePatch, type SpecOf, type StatusOf,
  type FieldPath, type ValueAt, type FieldContext,
  type HandlerContext, type EventContext, type Patch, type Diff, type DiffItem, type Cause,
  type HandlerFn, type EventHandlerFn, type FieldHandlerFn,
  type HandlerOptions, type SubhandlerOptions, type DeleteOptions, type FieldOptions, type EventOptions,
  type UpdateOptions, type ValueMatcher, type MetaMatcher, type MetaMatchers, type ObjectFilters,
  type IndexKey, type IndexEntries,
  type DaemonContext, type TimerContext, type DaemonFn, type TimerFn, type BackgroundOptions, type DaemonOptions,
  type TimerOptions,
  type Index, type IndexFn, type IndexOptions, type ObjectContext,
  type ActivityContext, type ActivityFn, type ActivityOptions,
  type LoginContext, type LoginFn, type LoginCredentials, type LoginResult,
  type KubeObject, type Resource, type ObjectMeta,
  AdmissionError, type AdmissionContext, type AdmissionRequest, type AdmissionOperation, type AdmissionOptions,
  type AdmissionPeer,
  type ValidateFn, type MutateFn, type ConvertFn, type ConversionTable, type JsonPatchOperation,
} from "./declaring/index.ts";
// Children, conditions and the API client in every handler's context (`ctx.api`, `ctx.event`):
//
//   on.create("kobunexamples.kobun.dev/v1", async ({ api, body, patch, event }) => {
//     const child = await api.apply(adopt(
//       { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `${body.metadata.name}-data` }, data: {} },
//       { owner: body },
//     ));
//     conditions.set(patch, { type: "Ready", status: "True", reason: "ChildCreated" }, { object: body });
//     event.info(child, "Adopted", `owned by ${body.metadata.name}`);
//   });
export {
  adopt, appendOwnerReference, removeOwnerReference, label, conditions, ApiError, ApplyConflictError,
  type Api, type ApiWatchEvent, type Call, type Where, type ResourceRef, type AdoptOptions, type OwnerReferenceOptions,
  type LabelOptions,
  type Condition, type ConditionInput, type ConditionsSchema, type SetConditionOptions, type EventRecorder,
  type ExceptionEventOptions,
  type KindOf,
  type ConfigMap, type Secret, type Namespace, type ServiceAccount, type Event, type Pod, type Service,
  type PersistentVolumeClaim, type Deployment, type StatefulSet, type DaemonSet, type ReplicaSet, type Job,
  type CronJob, type Ingress, type NetworkPolicy, type PodDisruptionBudget, type HorizontalPodAutoscaler, type Lease,
  type CustomResourceDefinition,
} from "./declaring/index.ts";
// Level-triggered reconciles over the operator's cache (docs/reconcile.md):
//
//   on.reconcile(resource<Widget>("widgets.example.com/v1"), async (ctx) => {
//     const name = `${ctx.name}-config`;
//     if (!ctx.cache.get(resource.configmaps, name)) await ctx.api.create(adopt(configMap(name), { owner: ctx.body }));
//     ctx.patch.status.ready = true;
//     return { requeueAfter: 60 };
//   }, { owns: [resource.configmaps] });
export {
  type ReconcileContext, type ReconcileFn, type ReconcileOptions, type ReconcileResult, type ReconcileTarget,
  type Cache, type CacheListOptions, type ObjectKey, type WatchedResource, type MapTools, type TargetObject,
} from "./declaring/index.ts";
// Handler time: the clock that runs timers, requeueAfter and retries, which a test can move
// (`startOperator({ clock: "virtual" })`, `kit.advance(seconds)`; docs/testing.md, "Virtual time"):
//
//   on.reconcile(Reports, ({ spec }) => {
//     const due = nextRun(spec.schedule, now());                    // not `new Date()`
//     return { requeueAfter: (due.getTime() - now().getTime()) / 1000 };
//   });
//   on.daemon(Pollers, async ({ signal }) => { while (await sleep(60, signal)) await poll(); });
export { now, sleep } from "./declaring/index.ts";
export {
  run, type RunOptions, type RunReport, type StartedInfo, FatalError, ExitCode, resolveSettings, ConfigError,
  type Settings, Toggle,
} from "./runtime/index.ts";
// Routing the operator's log (an embedder's own sink, or lines kept in memory) and sharing a memo:
//
//   import { Logger, memorySink, run } from "kobun";
//   const logs = memorySink("info", "plain", { max: 1000 }); // the last 1000 lines; or any { level, format, write }
//   await run({ signal, logger: new Logger(logs), memo: { cache: new Map() } });
//   await logs.until(/operator started/);                 // logs.lines: the lines kept so far
export {
  Logger, memorySink, stderrSink, type LogSink, type LogLevel, type LogFormat, type MemorySink, type MemorySinkOptions,
} from "./runtime/index.ts";
