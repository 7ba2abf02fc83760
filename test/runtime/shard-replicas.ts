// Sharded replicas in-process for tests (test/runtime/sharding.test.ts, test/e2e/scaling.e2e.ts):
// each runs the whole operator with `sharding: { replicas: auto }` and a handler on ConfigMaps that
// records its start and end per object, optionally behind a TCP proxy of its own (to count the
// bytes it receives, and to cut it off as a SIGKILL would).

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/index.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { run } from "../../src/runtime/operator.ts";
import { Logger, memorySink } from "../../src/util/log.ts";
import { proxiedKubeconfig } from "./lease-replicas.ts";
import { startTcpProxy, type TcpProxy } from "./tcp-proxy.ts";

export const SHARD_LEASE = { duration: "3s", renewDeadline: "2s", retryPeriod: "250ms" };

/** One handler run; `aborted`: its signal aborted (a handover), so its result was not written. */
export interface Span { replica: string; uid: string; start: number; end?: number; aborted?: boolean }

export interface ShardReplica {
  id: string;
  lines: string[];
  proxy?: TcpProxy;
  /** Its /metrics text (empty until it started). */
  metrics(): string;
  stop(): Promise<void>;
}

/** `deaf`: the handler ignores its signal, so only the handover's wait keeps it from overlapping; `limit`: workers.limit; `shards`: default 16; `onStart`: told of each run as it starts. */
export interface Work { ms: number; deaf?: boolean; limit?: number; shards?: number; onStart?(span: Span): void }

export async function shardReplica(api: { url: string; kubeconfigPath: string }, id: string, namespace: string, spans: Span[], work: Work = { ms: 20 }, proxied = false): Promise<ShardReplica> {
  const proxy = proxied ? startTcpProxy(new URL(api.url)) : undefined;
  const dir = mkdtempSync(join(tmpdir(), "kobun-shard-replica-"));
  const kubeconfig = join(dir, "kubeconfig.yaml");
  writeFileSync(kubeconfig, proxy ? proxiedKubeconfig(readFileSync(api.kubeconfigPath, "utf8"), proxy.url) : readFileSync(api.kubeconfigPath, "utf8"), { mode: 0o600 });
  const client = await KubeClient.connect({ kubeconfig });
  const registry = new Registry();
  registry.on.create("v1/configmaps", async ({ signal, uid }) => {
    const span: Span = { replica: id, uid: uid!, start: performance.now() };
    spans.push(span);
    work.onStart?.(span);
    try {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, work.ms);
        if (!work.deaf) signal.addEventListener("abort", () => { clearTimeout(timer); resolve(); }, { once: true });
      });
      if (signal.aborted) throw signal.reason;
    } finally {
      span.end = performance.now();
      span.aborted = signal.aborted;
    }
  }, { id: "record" });
  const sink = memorySink("debug");
  const controller = new AbortController();
  const settings = resolveSettings({
    fileData: {
      sharding: { replicas: "auto", shards: work.shards ?? 16 },
      peering: { name: namespace, freezeGracePeriod: "500ms", lease: SHARD_LEASE },
      shutdown: { gracePeriod: "1s" },
      workers: { batchWindow: 0, ...(work.limit ? { limit: work.limit } : {}) },
    },
    flags: { namespaces: [namespace] },
  });
  let exposed: (() => string) | undefined;
  const running = run({ signal: controller.signal, client, registry, logger: new Logger(sink), settings, peerId: id, onStarted: ({ health }) => (exposed = () => health.metrics.expose()) });
  return {
    id, lines: sink.lines, ...(proxy ? { proxy } : {}),
    metrics: () => exposed?.() ?? "",
    async stop() {
      controller.abort();
      await running;
      client.close();
      proxy?.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Handler runs that completed (not stopped by a handover). */
export const completed = (spans: Span[]) => spans.filter((s) => s.end !== undefined && !s.aborted);

/** Objects that were inside two replicas' handlers at the same time. */
export function overlaps(spans: Span[]): string[] {
  const found: string[] = [];
  for (const [uid, list] of Map.groupBy(spans, (s) => s.uid)) for (const a of list) for (const b of list) {
    if (a !== b && a.replica < b.replica && a.start < (b.end ?? Infinity) && b.start < (a.end ?? Infinity)) found.push(`${uid}: ${a.replica} and ${b.replica}`);
  }
  return found;
}
