// Two in-process operators in lease mode, each talking to the API server (the sandbox or a real
// kube-apiserver) through a TCP proxy of its own, so that a test can cut the holder off mid-handler
// and measure, with a handler that records its start and end per replica, whether the standby
// ever runs the same handler on the same object while the holder is still inside it.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/index.ts";
import { KubeClient } from "../../src/kube/client.ts";
import type { Resource } from "../../src/kube/types.ts";
import { run } from "../../src/runtime/operator.ts";
import { Logger, memorySink } from "../../src/util/log.ts";
import { eventually } from "./helpers.ts";
import { startTcpProxy, type TcpProxy } from "./tcp-proxy.ts";

const CONFIGMAPS: Resource = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false };

/** Lease timings short enough for a test, long enough for a loaded 2-core machine. */
export const LEASE = { duration: "3s", renewDeadline: "2s", retryPeriod: "250ms" };

export interface ApiServer {
  url: string;
  /** Its kubeconfig's text (the proxies point a copy of it at themselves). */
  kubeconfig: string;
  /** An admin client, for the objects the test creates. */
  client: KubeClient;
  /** Where the operators watch configmaps. */
  namespace: string;
}

/** When a replica's handler started and ended (performance clock), and its start by the wall clock (log lines carry that). */
export interface Span { replica: string; start: number; end?: number; startedAt: number }

export interface Replica {
  id: string;
  proxy: TcpProxy;
  lines: string[];
  stop(): Promise<void>;
}

/** How a replica registers its handler (recorded: `call`) for configmaps labelled `scenario`; by default an on.create. */
export type Registration = (registry: Registry, scenario: string, call: (signal: AbortSignal) => Promise<void>) => void;

const onCreate: Registration = (registry, scenario, call) =>
  registry.on.create("v1/configmaps", ({ signal }) => call(signal), { id: "nine-seconds", labels: { scenario } });

/** One operator in lease mode, behind a proxy of its own, running `handler` on configmaps labelled `scenario`. */
export async function leaseReplica(
  api: ApiServer, id: string, scenario: string, grace: string, handler: (signal: AbortSignal) => Promise<void>, spans: Span[],
  register: Registration = onCreate,
): Promise<Replica> {
  const proxy = startTcpProxy(new URL(api.url));
  const dir = mkdtempSync(join(tmpdir(), "kobun-lease-replica-"));
  const kubeconfig = join(dir, "kubeconfig.yaml");
  writeFileSync(kubeconfig, proxiedKubeconfig(api.kubeconfig, proxy.url), { mode: 0o600 });
  const client = await KubeClient.connect({ kubeconfig });
  const registry = new Registry();
  register(registry, scenario, async (signal) => {
    const span: Span = { replica: id, start: performance.now(), startedAt: Date.now() };
    spans.push(span);
    try {
      await handler(signal);
    } finally {
      span.end = performance.now();
    }
  });
  const sink = memorySink("debug");
  const controller = new AbortController();
  const settings = resolveSettings({
    fileData: { peering: { mode: "lease", name: scenario, freezeGracePeriod: grace, lease: LEASE }, shutdown: { gracePeriod: "1s" } },
    flags: { namespaces: [api.namespace] },
  });
  const running = run({ signal: controller.signal, client, registry, logger: new Logger(sink), settings, peerId: id });
  return {
    id, proxy, lines: sink.lines,
    async stop() {
      controller.abort();
      await running;
      client.close();
      proxy.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The kubeconfig with its server pointed at the proxy; the server's certificate is still checked against its own name. */
export function proxiedKubeconfig(text: string, proxyUrl: string): string {
  const config = Bun.YAML.parse(text) as { clusters?: { cluster: Record<string, unknown> }[] };
  for (const { cluster } of config.clusters ?? []) {
    const original = new URL(String(cluster.server));
    cluster.server = proxyUrl;
    if (original.protocol === "https:" && original.hostname !== "127.0.0.1" && !cluster["tls-server-name"]) cluster["tls-server-name"] = original.hostname;
  }
  return JSON.stringify(config);
}

/**
 * Starts the holder, then the standby, then the object whose handler the holder runs; then cuts
 * the holder off: "blackhole" (requests hang) or "close" (connections end, new ones are refused).
 */
export async function cutOffMidHandler(
  api: ApiServer, scenario: string, grace: string, handler: (signal: AbortSignal) => Promise<void>,
  cut: "blackhole" | "close" = "blackhole", register: Registration = onCreate,
) {
  const spans: Span[] = [];
  const holder = await leaseReplica(api, "holder", scenario, grace, handler, spans, register);
  const replicas = [holder];
  try {
    // Not the toggle: it runs until the election starts (after the resources are resolved).
    await eventually(() => holder.lines.some((l) => l.includes("acquired the lease")), "the first replica to hold the lease", 10_000);
    const standby = await leaseReplica(api, "standby", scenario, grace, handler, spans, register);
    replicas.push(standby);
    await eventually(() => standby.lines.some((l) => l.includes("standing by")), "the second replica to stand by", 10_000);
    await api.client.create(CONFIGMAPS, api.namespace, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: scenario, labels: { scenario } } });
    await eventually(() => spans.some((s) => s.replica === "holder"), "the holder's handler to start", 10_000);
    if (cut === "blackhole") holder.proxy.blackhole();
    else holder.proxy.close();
    return { spans, holder, standby, cutAt: performance.now() };
  } catch (error) {
    for (const r of replicas) await r.stop();
    throw error;
  }
}

/** What the honouring scenario measures: when each replica was inside the handler, relative to the cut. */
export function overlapOf(spans: Span[], cutAt: number): { overlapMs: number; gapMs: number; holderEndedMs: number; standbyStartedMs: number } {
  const first = spans.find((s) => s.replica === "holder")!;
  const second = spans.find((s) => s.replica === "standby")!;
  return {
    overlapMs: Math.max(0, first.end! - second.start),
    gapMs: second.start - first.end!,
    holderEndedMs: first.end! - cutAt,
    standbyStartedMs: second.start - cutAt,
  };
}
