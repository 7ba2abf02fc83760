// An operator in-process whose on.create handler on ConfigMaps, once its signal aborts (a stop),
// takes `windDownMs` more: for the tests of what other replicas see while a stop outlasts a
// lease or a peering record (stop-keeps-hold.test.ts).

import { resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/index.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { run, type RunReport } from "../../src/runtime/operator.ts";
import { Logger, memorySink } from "../../src/util/log.ts";

/** Performance-clock start and end, and the end by the wall clock (log lines carry that). */
export interface Span { replica: string; start: number; end?: number; endedAt?: number }

export interface SlowStopper { lines: string[]; stop(): Promise<RunReport> }

export async function slowStopper(
  kubeconfig: string, id: string, spans: Span[], windDownMs: number, fileData: Record<string, unknown>,
): Promise<SlowStopper> {
  const client = await KubeClient.connect({ kubeconfig });
  const registry = new Registry();
  registry.on.create("v1/configmaps", async ({ signal }) => {
    const span: Span = { replica: id, start: performance.now() };
    spans.push(span);
    try {
      await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
      await Bun.sleep(windDownMs);
    } finally {
      span.end = performance.now();
      span.endedAt = Date.now();
    }
  }, { id: "slow-stop" });
  const settings = resolveSettings({ fileData, flags: { namespaces: ["default"] } });
  const stop = new AbortController();
  const sink = memorySink("debug");
  const running = run({ signal: stop.signal, client, registry, logger: new Logger(sink), settings, peerId: id });
  return {
    lines: sink.lines,
    async stop() {
      stop.abort();
      const report = await running;
      client.close();
      return report;
    },
  };
}

/** When a log line was written (plain format: it starts with the time). */
export const loggedAt = (line: string) => Date.parse(line.split(" ")[0]!);
