// kube/: the only room that speaks HTTP to the API server. A kubeconfig, in-cluster or login
// credentials → TLS and auth for native fetch (connection.ts); the verbs and paging (client.ts);
// the transport under them: HTTP/2 where offered, retries of transient failures, a 401 re-read
// once, the budget of long-lived watch connections (transport.ts, budget.ts); failures as
// ApiError carrying the server's Status, or ConnectionError (errors.ts).
// Must never: import a room of ours but util/, keep a stream's socket open once its signal
// aborted, or log a credential (tokens, client keys, Secret data: util/redact.ts).
export { KubeClient, queryString, type ClientOptions, type ListAllOptions, type ListOptions, type Query, type RequestOptions, type WriteOptions } from "./client.ts";
export { Transport } from "./transport.ts";
export { connect, DEFAULT_SERVICE_ACCOUNT_DIR, KubeconfigError, type AuthKind, type ConnectOptions, type Connection, type ConnectionTLS } from "./connection.ts";
export { parseSelector, type ParsedSelector, type ResourceSelector } from "./discovery.ts";
export { ApiError, ApplyConflictError, ConnectionError, isConflict, isGone, isNotFound, isStatus } from "./errors.ts";
export * from "./types.ts";
