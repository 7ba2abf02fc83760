// streams/: which watch streams run, and keeping them running. Per resource, namespace, shard
// and selector it lays the streams out (layout.ts: cluster-wide, a fixed list, or globs followed
// as namespaces come and go; coverage.ts: one routed cluster-wide stream once the namespaces'
// streams would not fit the connection budget; shard-streams.ts: the owned shards, or every shard
// for a resource runtime/ says is watched whole, a reconcile's children), each stream
// writing its own shelf of its resource's one store (caching/), and it supervises each one
// (resource-stream.ts): waits out a freeze, relists on resume, restarts a failing watch with
// backoff and reports it on /healthz, ends the operator on a 403 that retrying cannot cure
// (forbidden.ts), reports streams starved of connections (starvation.ts).
// It must never read the settings or start a process-level part (peering, the Leases, metrics'
// registry, exit codes): runtime/ reads kobun.yaml into named options and hands in what it
// starts. It never imports runtime/ or config/ (test/contracts/rooms.ts).

export {
  layOut, type EventConsumer, type LayoutOptions, type LayoutNamespaces, type LayoutPeering, type PeeringPlace,
  type WatchedResource,
} from "./layout.ts";
export { type Selectors, type StreamObserver, type StreamSelection, type StreamTimings } from "./resource-stream.ts";
export { serveShardStreams, type ShardedLayout, type ShardedStream } from "./shard-streams.ts";
export { namespacesWatchedApart } from "./coverage.ts";
export { PermissionsLacking } from "./forbidden.ts";
export { reportStarvedStreams } from "./starvation.ts";
