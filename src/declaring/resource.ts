// Typed resource tokens: `resource<KobunExample>("kobunexamples.kobun.dev/v1")` names a resource
// the way a selector string does and carries the object's TypeScript type, so that
// `on.create(Examples, (ctx) => …)` types ctx.body, ctx.spec, ctx.status and ctx.patch.
// A token IS an ordinary object selector ({ group, version, plural }): every room that accepts
// selectors accepts tokens unchanged; the type exists only for the compiler.
// Built-in kinds come typed from @kubernetes/client-node's models, imported as types only
// (nothing of that package is loaded at run time by this file).

import type * as k8s from "@kubernetes/client-node";
import { parseSelector } from "../kube/index.ts";
import { checkAlias } from "./aliases.ts";
import { RegistrationError } from "./registration.ts";
import type { KubeObject, ObjectMeta } from "../kube/index.ts";

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

/**
 * The client-node models as they come over the wire: timestamps are strings, not Dates (kobun
 * never deserialises into the model classes), and metadata is always there.
 */
export type Wire<T> = T extends Date ? string
  : T extends readonly (infer E)[] ? Wire<E>[]
  : T extends object ? { [K in keyof T]: Wire<T[K]> }
  : T;
type Builtin<T extends { metadata?: unknown }> = Omit<Wire<T>, "metadata"> & { metadata: ObjectMeta };

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

/** What a metadata-only token's handlers receive: the object's metadata, under the resource's apiVersion and kind. */
export interface MetadataObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
}

/**
 * Names a resource and the type of its objects: `resource<KobunExample>("kobunexamples.kobun.dev/v1")`;
 * `resource<KobunExample>("kobunexamples.kobun.dev/v1", { alias: "examples" })` lets kobun.yaml say
 * `resources: { examples: … }`.
 */
function typed(selector: string, options: TokenOptions & { metadataOnly: true }): ResourceToken<MetadataObject>;
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

export type Pod = Builtin<k8s.V1Pod>;
export type ConfigMapObject = Builtin<k8s.V1ConfigMap>;
export type SecretObject = Builtin<k8s.V1Secret>;
export type ServiceObject = Builtin<k8s.V1Service>;
export type NamespaceObject = Builtin<k8s.V1Namespace>;
export type ServiceAccountObject = Builtin<k8s.V1ServiceAccount>;
export type PersistentVolumeClaimObject = Builtin<k8s.V1PersistentVolumeClaim>;
export type EventObject = Builtin<k8s.CoreV1Event>;
export type DeploymentObject = Builtin<k8s.V1Deployment>;
export type StatefulSetObject = Builtin<k8s.V1StatefulSet>;
export type DaemonSetObject = Builtin<k8s.V1DaemonSet>;
export type JobObject = Builtin<k8s.V1Job>;
export type CronJobObject = Builtin<k8s.V1CronJob>;
export type IngressObject = Builtin<k8s.V1Ingress>;
export type LeaseObject = Builtin<k8s.V1Lease>;
export type CustomResourceDefinitionObject = Builtin<k8s.V1CustomResourceDefinition>;

const builtins = {
  pods: typed<Pod>("v1/pods"),
  configmaps: typed<ConfigMapObject>("v1/configmaps"),
  secrets: typed<SecretObject>("v1/secrets"),
  services: typed<ServiceObject>("v1/services"),
  namespaces: typed<NamespaceObject>("v1/namespaces"),
  serviceaccounts: typed<ServiceAccountObject>("v1/serviceaccounts"),
  persistentvolumeclaims: typed<PersistentVolumeClaimObject>("v1/persistentvolumeclaims"),
  events: typed<EventObject>("v1/events"),
  deployments: typed<DeploymentObject>("apps/v1/deployments"),
  statefulsets: typed<StatefulSetObject>("apps/v1/statefulsets"),
  daemonsets: typed<DaemonSetObject>("apps/v1/daemonsets"),
  jobs: typed<JobObject>("batch/v1/jobs"),
  cronjobs: typed<CronJobObject>("batch/v1/cronjobs"),
  ingresses: typed<IngressObject>("networking.k8s.io/v1/ingresses"),
  leases: typed<LeaseObject>("coordination.k8s.io/v1/leases"),
  customresourcedefinitions: typed<CustomResourceDefinitionObject>("apiextensions.k8s.io/v1/customresourcedefinitions"),
} as const;

/** `resource<T>("plural.group/version")`, and the built-in kinds typed: `resource.pods`, `resource.configmaps`, … */
export const resource: typeof typed & typeof builtins = Object.assign(typed, builtins);
