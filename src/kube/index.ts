// kube/: the only room that speaks HTTP to the API server.
export { KubeClient, queryString, type ClientOptions, type ListAllOptions, type ListOptions, type Query, type RequestOptions, type WriteOptions } from "./client.ts";
export { Transport } from "./transport.ts";
export { connect, DEFAULT_SERVICE_ACCOUNT_DIR, KubeconfigError, type AuthKind, type ConnectOptions, type Connection, type ConnectionTLS } from "./connection.ts";
export { parseSelector, type ParsedSelector, type ResourceSelector } from "./discovery.ts";
export { ApiError, ApplyConflictError, ConnectionError, isConflict, isGone, isNotFound, isStatus } from "./errors.ts";
export * from "./types.ts";
