// kube/: the only room that speaks HTTP to the API server. A kubeconfig, in-cluster or login
// credentials → TLS and auth for native fetch (connection.ts); the verbs and paging (client.ts);
// the transport under them: HTTP/2 where offered, retries of transient failures, a 401 re-read
// once, the budget of long-lived watch connections (transport.ts, budget.ts); failures as
// ApiError carrying the server's Status, or ConnectionError (errors.ts).
// Must never: import a room of ours but util/, keep a stream's socket open once its signal
// aborted, or log a credential (tokens, client keys, Secret data: util/redact.ts).
export {
  KubeClient, queryString, type ClientOptions, type ListAllOptions, type ListOptions, type Query, type RequestOptions,
  type WriteOptions,
} from "./client.ts";
export { Transport } from "./transport.ts";
export {
  connect, DEFAULT_SERVICE_ACCOUNT_DIR, KubeconfigError, type AuthKind, type ConnectOptions, type Connection,
  type ConnectionTLS,
} from "./connection.ts";
export { parseSelector, type ParsedSelector, type ResourceSelector } from "./discovery.ts";
export { ApiError, ApplyConflictError, ConnectionError, isConflict, isGone, isNotFound, isStatus } from "./errors.ts";
export * from "./types.ts";
export { StreamBudget, fetchSlots, streamBudget, type BudgetState } from "./budget.ts";
export { DEFAULT_PAGE_SIZE } from "./client.ts";
export { isForbidden } from "./errors.ts";
export {
  type Builtin, type Condition, type ConfigMap, type CronJob, type CustomResourceDefinition, type DaemonSet,
  type Deployment, type Event, type HorizontalPodAutoscaler, type Ingress, type Job, type KindOf, type Lease,
  type Namespace, type NetworkPolicy, type PersistentVolumeClaim, type Pod, type PodDisruptionBudget,
  type ReplicaSet, type Secret, type Service, type ServiceAccount, type StatefulSet, type Wire,
} from "./kinds.ts";
export {
  freshLease, leaseResource, newer, releasedLease, renewedLease, specOf, type LeaseSpec,
} from "./lease-record.ts";
export { LoginError, loginConnection, type Login, type LoginCredentials, type LoginResult } from "./login.ts";
export { parseWithoutManagedFields } from "./managed-fields.ts";
export { type RequestObserver } from "./observer.ts";
export { METADATA_LIST, METADATA_OBJECT, metadataOf } from "./partial.ts";
export { type RenewalFailure } from "./renewal.ts";
export {
  apiVersionOf, resourceName, resourcePath, type KubeObject, type ObjectList, type ObjectMeta, type PatchType,
  type RawWatchEvent, type Resource, type Status,
} from "./types.ts";
export { compareResourceVersions, notOlder } from "./versions.ts";
