// Typed resource tokens: `resource<KobunExample>("kobunexamples.kobun.dev/v1")` names a resource
// the way a selector string does and carries the object's TypeScript type, so that
// `on.create(Examples, (ctx) => …)` types ctx.body, ctx.spec, ctx.status and ctx.patch.
// A token IS an ordinary object selector ({ group, version, plural }): every room that accepts
// selectors accepts tokens unchanged; the type exists only for the compiler.
// Built-in kinds come typed with kube/kinds.ts's types (client-node's wire models): the same
// types `ctx.api` answers with and kobun exports (`Job`, `ConfigMap`, ...).

import { parseSelector } from "../kube/index.ts";
import { checkAlias } from "./aliases.ts";
import { RegistrationError } from "./registration.ts";
import type {
  ConfigMap, CronJob, CustomResourceDefinition, DaemonSet, Deployment, Event, HorizontalPodAutoscaler, Ingress, Job,
  KubeObject, Lease, Namespace, NetworkPolicy, ObjectMeta, PersistentVolumeClaim, Pod, PodDisruptionBudget,
  ReplicaSet, Secret, Service, ServiceAccount, StatefulSet, KindOf, ResourceSelector,
} from "../kube/index.ts";

declare const objectType: unique symbol;

/** A resource selector that knows the type of its objects. */
export interface ResourceToken<T extends object = KubeObject> {
  readonly group?: string;
  readonly version?: string;
  /** The plural (or kind) as written in the selector. */
  readonly plural: string;
  /** The resource's kobun.yaml key besides its selector (not enumerable: the token stays a plain selector). */
  readonly alias?: string;
  /** Its handlers read only metadata (TokenOptions.metadataOnly; not enumerable either). */
  readonly metadataOnly?: boolean;
  /** Never set: carries the object type for the compiler only. */
  readonly [objectType]?: T;
}

/** The object type a token or selector stands for (untyped selectors: KubeObject). */
export type ObjectOf<S> = S extends ResourceToken<infer T> ? T : KubeObject;

/** What a token may carry besides its selector. */
export interface TokenOptions {
  /** A short name for the resource's key in kobun.yaml's `resources:` (instead of the selector). */
  alias?: string;
  /**
   * The handlers registered with this token read only the objects' metadata: when every handler
   * of the resource says so, it is watched as PartialObjectMetadata (kobun.yaml may overrule).
   */
  metadataOnly?: boolean;
}

declare const metadataOnlyMark: unique symbol;
/** The key that marks MetadataObject: `ctx.spec`/`ctx.status` of its handlers are `never` (reading them throws). */
export type MetadataOnlyMark = typeof metadataOnlyMark;

/** What a metadata-only token's handlers receive: the object's metadata, under the resource's apiVersion and kind. */
export interface MetadataObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  /** Never set: tells the compiler that the spec and status were not received. */
  readonly [metadataOnlyMark]?: true;
}

/**
 * Names a resource and the type of its objects: `resource<KobunExample>("kobunexamples.kobun.dev/v1")`;
 * `resource<KobunExample>("kobunexamples.kobun.dev/v1", { alias: "examples" })` lets kobun.yaml say
 * `resources: { examples: … }`.
 */
// Generic too, so that naming the kind (`resource<Pod>(…, { metadataOnly: true })`) does not skip this overload
// for the next, which would type a spec that reading throws.
function typed<_T extends object = KubeObject>(
  selector: string, options: TokenOptions & { metadataOnly: true },
): ResourceToken<MetadataObject>;
function typed<T extends object = KubeObject>(selector: string, options?: TokenOptions): ResourceToken<T>;
function typed<T extends object = KubeObject>(selector: string, options: TokenOptions = {}): ResourceToken<T> {
  const parsed = readSelector(selector);
  const token = { group: parsed.group, version: parsed.version, plural: parsed.name };
  if (options.alias !== undefined) {
    checkAlias(options.alias, parsed.text);
    Object.defineProperty(token, "alias", { value: options.alias, enumerable: false });
  }
  if (options.metadataOnly) Object.defineProperty(token, "metadataOnly", { value: true, enumerable: false });
  // Messages that print a selector show the text it was written as.
  Object.defineProperty(token, "toJSON", { value: () => parsed.text, enumerable: false });
  return Object.freeze(token);
}

/** The selector taken apart; one it cannot read is a registration error (exit 3, one line). */
function readSelector(selector: string): ReturnType<typeof parseSelector> {
  try {
    return parseSelector(selector);
  } catch (error) {
    throw new RegistrationError((error as Error).message, { cause: error });
  }
}

const builtins = {
  pods: typed<Pod>("v1/pods"),
  configmaps: typed<ConfigMap>("v1/configmaps"),
  secrets: typed<Secret>("v1/secrets"),
  services: typed<Service>("v1/services"),
  namespaces: typed<Namespace>("v1/namespaces"),
  serviceaccounts: typed<ServiceAccount>("v1/serviceaccounts"),
  persistentvolumeclaims: typed<PersistentVolumeClaim>("v1/persistentvolumeclaims"),
  events: typed<Event>("v1/events"),
  deployments: typed<Deployment>("apps/v1/deployments"),
  statefulsets: typed<StatefulSet>("apps/v1/statefulsets"),
  daemonsets: typed<DaemonSet>("apps/v1/daemonsets"),
  replicasets: typed<ReplicaSet>("apps/v1/replicasets"),
  jobs: typed<Job>("batch/v1/jobs"),
  cronjobs: typed<CronJob>("batch/v1/cronjobs"),
  ingresses: typed<Ingress>("networking.k8s.io/v1/ingresses"),
  networkpolicies: typed<NetworkPolicy>("networking.k8s.io/v1/networkpolicies"),
  poddisruptionbudgets: typed<PodDisruptionBudget>("policy/v1/poddisruptionbudgets"),
  horizontalpodautoscalers: typed<HorizontalPodAutoscaler>("autoscaling/v2/horizontalpodautoscalers"),
  leases: typed<Lease>("coordination.k8s.io/v1/leases"),
  customresourcedefinitions: typed<CustomResourceDefinition>("apiextensions.k8s.io/v1/customresourcedefinitions"),
} as const;

/** `resource<T>("plural.group/version")`, and the built-in kinds typed: `resource.pods`, `resource.configmaps`, … */
export const resource: typeof typed & typeof builtins = Object.assign(typed, builtins);

/** A selector string or a typed token, as every `on.*` takes them. */
export type ReconcileTarget<T extends object = KubeObject> = ResourceSelector | ResourceToken<T>;

/**
 * The object type a target names: a token's type, a built-in kind's, or KubeObject (a resolved
 * Resource, which has the shape of a token but no type: `namespaced` tells them apart).
 */
export type TargetObject<S> = S extends { namespaced: boolean } ? KubeObject
  : S extends ResourceToken<infer T> ? T : KindOf<S>;
