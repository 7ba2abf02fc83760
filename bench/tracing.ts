// Bench: what tracing costs. (1) In-process, the hot path of bench/metrics.ts (a watcher feeding
// a reconciler, one create handler, N objects), tracing off vs on (every cycle sampled, spans
// batched and sent over OTLP/HTTP to a receiver in another process), alternating rounds, CPU per
// object. (2) The binary: exec → first LIST and idle RSS with tracing off and on, and of a
// baseline binary built without the OpenTelemetry packages when KOBUN_BENCH_BASELINE names one.
//
//   bun bench/tracing.ts [N] [rounds]      (default: 2000 objects, 3 rounds each way)

import { readFileSync } from "node:fs";
import { startOtel } from "../src/observability/otel.ts";
import { startSandbox } from "@kobun/sandbox";
import { useTracer } from "../src/util/trace.ts";
import { ensureBinary, installExampleCRD, lineReader, median, report, round } from "./common.ts";
import { alternating, operatorRound } from "./metrics.ts";

async function withSink<R>(body: (endpoint: string) => Promise<R>): Promise<{ result: R; spans: number }> {
  const sink = Bun.spawn([process.execPath, `${import.meta.dir}/otlp-sink.ts`], { stdin: "pipe", stdout: "pipe", stderr: "inherit" });
  const lines = lineReader(sink.stdout);
  const { port } = JSON.parse(await lines.next());
  try {
    const result = await body(`http://127.0.0.1:${port}`);
    sink.stdin.write("stop\n");
    sink.stdin.flush();
    return { result, spans: JSON.parse(await lines.next()).spans };
  } finally {
    sink.kill();
    await sink.exited;
  }
}

async function hotPath(n: number, rounds: number): Promise<Record<string, unknown>> {
  const { result, spans } = await withSink((endpoint) =>
    alternating(rounds, async (client, resource, mode, r) => {
      if (mode === "off") return operatorRound(client, resource, n, `trace-off-${r}`, true);
      const otel = startOtel({ endpoint, serviceName: "bench", sampler: "always_on", samplerArg: 1 });
      useTracer(otel.tracer);
      try {
        return await operatorRound(client, resource, n, `trace-on-${r}`, true);
      } finally {
        useTracer(undefined);
        await otel.shutdown(10_000);
      }
    }),
  );
  return { objects: n, ...result, spansReceived: spans };
}

/** exec → first LIST and idle RSS of each binary variant. */
async function binaryStart(runs: number, endpoint: string): Promise<Record<string, unknown>> {
  const variants: Record<string, { binary: string; env: Record<string, string> }> = {
    off: { binary: ensureBinary(), env: {} },
    on: { binary: ensureBinary(), env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint } },
    ...(process.env.KOBUN_BENCH_BASELINE ? { baseline: { binary: process.env.KOBUN_BENCH_BASELINE, env: {} } } : {}),
  };
  const sandbox = await startSandbox();
  try {
    await installExampleCRD(sandbox);
    const figures: Record<string, { firstListMs: number[]; idleRssMiB: number[] }> = {};
    for (let i = 0; i < runs; i++) {
      for (const [name, { binary, env }] of Object.entries(variants)) {
        const f = (figures[name] ??= { firstListMs: [], idleRssMiB: [] });
        sandbox.stats.reset();
        const listed = sandbox.waitFor((r) => (r.verb === "list" || r.verb === "watch") && r.path.includes("kobunexamples"), 20_000);
        const t = performance.now();
        const child = Bun.spawn([binary, "run", "--kubeconfig", sandbox.kubeconfigPath, "--standalone", "-A", "-q"], {
          env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env }, stdout: "ignore", stderr: "ignore",
        });
        await listed;
        f.firstListMs.push(performance.now() - t);
        await Bun.sleep(500); // idle RSS is a reading after start-up settles, not a synchronisation
        f.idleRssMiB.push(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))?.[1] ?? 0) / 1024);
        child.kill("SIGTERM");
        await child.exited;
      }
    }
    const out: Record<string, unknown> = { runs };
    for (const [name, f] of Object.entries(figures)) out[name] = { execToFirstListMs: round(median(f.firstListMs)), idleRssMiB: round(median(f.idleRssMiB)), binaryMiB: round(Bun.file(variants[name]!.binary).size / 2 ** 20) };
    return out;
  } finally {
    await sandbox.stop();
  }
}

if (import.meta.main) {
  const n = Number(process.argv[2] ?? 2000);
  const rounds = Number(process.argv[3] ?? 3);
  const binary = (await withSink((endpoint) => binaryStart(5, endpoint))).result;
  report("tracing", { hotPath: await hotPath(n, rounds), binary });
}
