// The settings schema: every key kobun reads from kobun.yaml, with its type, default, range
// and one line of documentation. Validation (resolve.ts) and the example file (example.ts)
// are both driven by this one table, so they cannot drift apart. Times are in seconds.

import { SAMPLERS, type SamplerName } from "../util/index.ts";
import { WEBHOOKS_SECTION } from "./webhooks.ts";
import { RECONCILE_SECTION } from "./reconcile.ts";
import {
  countOrAuto, decimal, duration, flag, integer, oneOf, orNull, section, text, textList, type ValueOf,
} from "./fields.ts";

const LOG_LEVELS = ["debug", "info", "warn", "error"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const OBJECT_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const NAMESPACE_GLOB = /^[a-z0-9*?]([-a-z0-9*?]*[a-z0-9*?])?$/;
const isNamespaceGlob = (value: string) => value.length <= 63 && NAMESPACE_GLOB.test(value);

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "http:" && url.hostname !== "";
  } catch {
    return false;
  }
}

function isOtlpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "";
  } catch {
    return false;
  }
}

/** ":8080" and "host:port" as controller-runtime's --metrics-bind-address takes them, or an http:// URL. */
export function metricsUrl(address: string): string {
  if (address.startsWith("http://")) return address;
  return `http://${address.startsWith(":") ? "0.0.0.0" : ""}${address}`;
}

export const namespaceEntry = text({
  doc: "",
  expected:
    'a namespace name or glob like "team-*" (lowercase letters, digits, "-", "*", "?"), optionally negated with "!"',
  valid: (value) => isNamespaceGlob(value.startsWith("!") ? value.slice(1) : value),
});
export const excludedEntry = text({
  doc: "",
  expected: 'a namespace name or glob like "kube-*" (lowercase letters, digits, "-", "*", "?")',
  valid: isNamespaceGlob,
});

export const SETTINGS_SCHEMA = section("kobun settings", {
  peering: section("Peering: how replicas of this operator agree which one of them is active.", {
    name: text({
      default: "default", doc: "Name of the peering object shared by the replicas.",
      expected: 'a Kubernetes object name (lowercase letters, digits, "-" and ".")',
      valid: (value) => value.length <= 253 && OBJECT_NAME.test(value),
    }),
    priority: integer({
      default: 0, doc: "This replica's priority; the highest live priority is active, the others freeze.",
    }),
    mode: oneOf(["peering", "lease"], {
      default: "peering", doc: 'Kopf-style "peering" objects, or a coordination.k8s.io "lease".',
    }),
    group: oneOf(["kobun.dev", "kopf.dev"], {
      default: "kobun.dev", doc: 'API group of the peering resources; "kopf.dev" shares peering with Kopf operators.',
    }),
    lifetime: duration({
      default: 60, min: 1, max: 3600, doc: "How long a peer counts as alive after its last keepalive.",
    }),
    standalone: flag({ default: false, doc: "Run without peering at all (no freezing, no peering object)." }),
    clusterwide: orNull(
      flag({ doc: "Use the cluster-scoped peering resource instead of a namespaced one." }), "derived from namespaces",
    ),
    freezeGracePeriod: duration({
      default: 2, min: 0, max: 3600,
      doc: "How long running handlers may take to stop after a freeze (a peer, kobun freeze, a lost lease); " +
        "then they are abandoned, and nothing is written for them.",
    }),
    lease: section("Lease timings, used when mode is \"lease\" (as in client-go leader election).", {
      duration: duration({ default: 15, min: 1, max: 3600, doc: "How long a lease is valid after its last renewal." }),
      renewDeadline: duration({
        default: 10, min: 1, max: 3600,
        doc: "The holder freezes if it cannot renew the lease within this time; " +
          "renewDeadline + freezeGracePeriod must be less than duration.",
      }),
      retryPeriod: duration({
        default: 2, min: 0.1, max: 3600, doc: "How often to try to acquire or renew the lease.",
      }),
    }),
  }),
  namespaces: section("Namespaces: where to watch. " +
    "Neither include nor allNamespaces given: all namespaces (with a warning).", {
    include: textList({
      default: [], doc: 'Names or globs ("team-*"); entries starting with "!" exclude ("!kube-*").',
      expected: "a list of namespace names or globs", entry: namespaceEntry,
    }),
    exclude: textList({
      default: [], doc: 'Names or globs never watched ("kube-*").',
      expected: "a list of namespace names or globs", entry: excludedEntry,
    }),
    allNamespaces: flag({
      default: false, doc: "Watch the whole cluster (like -A); include must then hold only exclusions.",
    }),
  }),
  sharding: section("Sharding: replicas that are all active, each owning a part of the objects " +
    "(shards of the hash space, over Leases).", {
    replicas: countOrAuto({
      default: 1, min: 1, max: 1000,
      doc: 'How many replicas share the objects: 1 = no sharding; N = that many (the Deployment\'s replicas); ' +
        '"auto" = as many as are live. Shard Leases use peering.lease\'s timings.',
    }),
    shards: integer({
      default: 24, min: 1, max: 4096,
      doc: "How many pieces the hash space is cut into; at least the number of replicas. " +
        "24 splits evenly over 1, 2, 3, 4, 6, 8 or 12 replicas.",
    }),
    key: oneOf(["uid", "namespace"], {
      default: "uid",
      doc: 'What is hashed: "uid" spreads objects evenly; "namespace" keeps a namespace on one replica.',
    }),
  }),
  watching: section("Watching: the LIST + WATCH streams to the API server.", {
    serverTimeout: duration({
      default: 300, min: 1, max: 86400, doc: "timeoutSeconds asked of the API server for each watch request.",
    }),
    clientTimeout: duration({
      default: 0, min: 0, max: 86400,
      doc: "Drop a watch stream silent for this long; 0 derives it: serverTimeout + 10 % (its jitter) + 5s, " +
        "when a healthy server has ended it.",
    }),
    pageSize: integer({
      default: 500, min: 1, max: 10000, doc: "Objects per LIST page (large LISTs are paged, never fetched at once).",
    }),
    // etcd keeps objects up to ~1.5 MiB; their JSON (base64, escapes) can be a few times that.
    lineLimit: integer({
      default: 8388608, min: 1048576, max: 1073741824,
      doc: "Longest watch line (one event's JSON) accepted, in bytes; a longer one is dropped unread, " +
        "reported on /healthz and in the log, and the stream restarted with backoff.",
    }),
    backoff: section("Reconnect backoff after a failed watch or list.", {
      initial: duration({ default: 0.8, min: 0, max: 3600, doc: "First delay before reconnecting." }),
      max: duration({ default: 30, min: 0, max: 3600, doc: "Largest delay between reconnects." }),
      factor: decimal({ default: 2, min: 1, max: 10, doc: "Each further delay is the previous one times this." }),
    }),
    reconnectHealthyAfter: duration({
      default: 60, min: 0, max: 86400, doc: "A stream open this long resets the backoff to its initial delay.",
    }),
    clusterWideAbove: integer({
      default: 50, min: 0, max: 1000000,
      doc: "Serving more namespaces than this (or fewer, when a watch per namespace and resource would not fit " +
        "the connection budget), watch each resource (and the peering objects) once cluster-wide, filtered by " +
        "namespace, instead of once per namespace; needs cluster-wide list/watch RBAC.",
    }),
  }),
  workers: section("Workers: one per object, fed by the event queues.", {
    limit: integer({ default: 100, min: 1, max: 100000, doc: "Most objects handled at the same time." }),
    batchWindow: duration({
      default: 0.1, min: 0, max: 60,
      doc: "An object is handled at most once per window (its first event at once); " +
        "events meanwhile merge, the latest wins.",
    }),
    idleTimeout: duration({ default: 5, min: 0, max: 3600, doc: "A worker with no events for this long exits." }),
    priority: flag({
      default: true,
      doc: "Objects whose change is new are handled before the bulk of a start-up's or relist's objects " +
        "and before retries (false: first come, first served).",
    }),
  }),
  handling: section("Handling: retries and timeouts of handlers (each handler may override them).", {
    // Attempts, as a handler's own `retries` option counts them: 0 would be no attempt at all.
    retries: orNull(
      integer({ min: 1, doc: "Most attempts of a failing handler before it fails for good (1: no retry)." }),
      "retry forever",
    ),
    backoff: duration({ default: 60, min: 0, max: 86400, doc: "Delay before retrying a failed handler." }),
    timeout: orNull(duration({ min: 0.001, max: 86400, doc: "Give up a handler after this long." }), "no timeout"),
    // Annotations are limited to 256 KiB in total and share it with the user's own: the
    // default leaves most of it to them; the maximum leaves 32 KiB.
    diffBaseLimit: integer({
      default: 65536, min: 1024, max: 229376,
      doc: "Largest last-handled configuration (the diff base) kept on an object, in bytes of JSON; " +
        "a larger one is kept as a digest, and the next update's diff is unavailable.",
    }),
  }),
  shutdown: section("Shutdown on SIGINT/SIGTERM.", {
    gracePeriod: duration({
      default: 5, min: 0, max: 3600, doc: "How long running handlers may take to finish after a stop signal.",
    }),
  }),
  logging: section("Logging to stderr.", {
    format: oneOf(["plain", "json"], { default: "plain", doc: 'Log line format: "plain" (key=value) or "json".' }),
    level: oneOf(LOG_LEVELS, { default: "info", doc: "The least severe level that is logged." }),
  }),
  probes: section("Probes: an HTTP endpoint with /healthz, /readyz and /metrics.", {
    liveness: orNull(text({
      doc: 'Where to serve them, e.g. "http://0.0.0.0:8080/healthz".',
      expected: 'an http:// URL like "http://0.0.0.0:8080/healthz"', valid: isHttpUrl,
    }), "no probe endpoint"),
    readiness: oneOf(["frozen-is-unready", "frozen-is-ready"], {
      default: "frozen-is-unready",
      doc: '/readyz while frozen: "frozen-is-ready" keeps a standby replica ready ' +
        "(e.g. behind a Service that must list it).",
    }),
    eventLoopLimit: duration({
      default: 10, min: 0.1, max: 3600,
      doc: "/healthz fails while the event loop was recently blocked this long at once (a synchronous handler).",
    }),
  }),
  metrics: section("Metrics: /metrics on a listener of its own (it is always on the probe listener too).", {
    address: orNull(text({
      doc: 'Where to serve /metrics, e.g. ":8080" or "http://0.0.0.0:9090".',
      expected: 'an address like ":8080", "0.0.0.0:8080" or "http://0.0.0.0:8080"',
      // Without http://, an address must end in its port (":8080", "host:8080"): "nonsense" is no address.
      valid: (value) => (value.startsWith("http://") || /:\d+$/.test(value)) && isHttpUrl(metricsUrl(value)),
    }), "only on the probe listener"),
  }),
  tracing: section("Tracing: OpenTelemetry spans (a cycle per object, its handlers and API requests) sent as OTLP " +
    "over HTTP. Off unless an endpoint is given; the OTEL_* variables override these.", {
    endpoint: orNull(text({
      doc: 'The OTLP/HTTP base URL, e.g. "http://otel-collector:4318" (spans go to <endpoint>/v1/traces). ' +
        "$OTEL_EXPORTER_OTLP_ENDPOINT.",
      expected: 'an http:// or https:// URL like "http://otel-collector:4318"', valid: isOtlpUrl,
    }), "tracing off"),
    serviceName: text({
      default: "kobun", doc: "The spans' service.name. $OTEL_SERVICE_NAME.",
      expected: "a non-empty name", valid: (value) => value.trim() !== "",
    }),
    sampler: oneOf(SAMPLERS, {
      default: "parentbased_always_on",
      doc: "Which cycles are traced: always_on, always_off, traceidratio, or parentbased_* of those. " +
        "$OTEL_TRACES_SAMPLER.",
    }),
    samplerArg: decimal({
      default: 1, min: 0, max: 1, doc: "The traceidratio samplers' ratio, 0 to 1. $OTEL_TRACES_SAMPLER_ARG.",
    }),
  }),
  posting: section("Posting: Kubernetes Events about handled objects.", {
    enabled: flag({
      default: true,
      doc: "Post Events for handler outcomes (successes, retries, failures) and what handlers post with ctx.event.",
    }),
    level: oneOf(LOG_LEVELS, {
      default: "info",
      doc: "The least severe level that is posted as an Event: " +
        "outcomes are info (success) or warn/error (retry, failure).",
    }),
    logs: flag({
      default: false,
      doc: "Post handlers' ctx.logger lines at `level` or above as Events about the handled object too " +
        "(reason Logging), as Kopf does.",
    }),
  }),
  webhooks: WEBHOOKS_SECTION,
  reconcile: RECONCILE_SECTION,
  memory: section("Memory: what the process hands back to the system.", {
    trimCodePages: flag({
      default: true,
      doc: "In a `kobun build` executable on Linux: after start-up, and once quiet for 2 s after activity, " +
        "ask the kernel to reclaim the pages of the runtime's code that stopped running " +
        "(madvise MADV_PAGEOUT); a page that runs again is read back from the executable.",
    }),
    leanStartup: flag({
      default: true,
      doc: "In a `kobun build` executable: through the first sync (until quiet once ready; 30 s after ready, " +
        "30 min after start at most) keep the JIT from compiling what runs once per " +
        "object, and hand back the code pages it ran while busy (after 500 ms, each trim doubling the wait up " +
        "to 4 s): a lower peak for more CPU through it. Then the normal JIT.",
    }),
  }),
  kube: section("Kube: how to reach the cluster.", {
    kubeconfig: orNull(
      text({ doc: "Path of the kubeconfig file (a relative one from the current directory, not this file's)." }),
      "$KUBECONFIG, ~/.kube/config or in-cluster",
    ),
    context: orNull(text({ doc: "The kubeconfig context to use." }), "the kubeconfig's current context"),
    requestTimeout: duration({
      default: 60, min: 0, max: 3600,
      doc: "A request (not a watch) with no complete answer this long is aborted and retried; 0 = never.",
    }),
    http1: flag({
      default: false,
      doc: "Speak only HTTP/1.1 to the API server; by default HTTP/2 when it is https and selects it " +
        "(one connection carries every request and watch).",
    }),
  }),
});

/** Settings exactly as the schema reads them, before derived values are filled in. */
export type SchemaValues = ValueOf<typeof SETTINGS_SCHEMA>;
