// Shared bench plumbing: a built binary, the example CRD in a sandbox, medians, JSON output.
// Every figure is reported beside a baseline measured in the same run, as a ratio.

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Sandbox } from "@kobun/sandbox";

export const root = join(import.meta.dir, "..");
export const binary = join(root, "dist/kobun");

/**
 * The checkout whose operator latency.ts and lifecycle.ts measure: KOBUN_BENCH_OPERATOR_ROOT
 * (another worktree, its node_modules in place), else this one. The sandbox is always this
 * checkout's, in its own process, so two operators are compared against the same server.
 */
export const operatorRoot = resolveRoot(process.env.KOBUN_BENCH_OPERATOR_ROOT);

function resolveRoot(dir: string | undefined): string {
  if (dir === undefined || dir === "") return root;
  const abs = resolve(dir);
  if (!existsSync(join(abs, "src/runtime/operator.ts")) || !existsSync(join(abs, "build.ts"))) {
    throw new Error(`bench: KOBUN_BENCH_OPERATOR_ROOT=${dir} is not a kobun checkout (no src/runtime/operator.ts or build.ts)`);
  }
  if (!existsSync(join(abs, "node_modules"))) throw new Error(`bench: KOBUN_BENCH_OPERATOR_ROOT=${dir} has no node_modules (symlink /work/main/node_modules there)`);
  return abs;
}

const built = new Set<string>();

/**
 * Builds `from`/dist/kobun once per bench process (≈ 1 s): one left from an older checkout
 * would measure old code. `handlers`/`outfile`: an operator of other handlers.
 */
export function ensureBinary(from = root, handlers?: string, outfile = "dist/kobun"): string {
  const out = join(from, outfile);
  if (!built.has(out)) {
    const args = handlers ? ["--handlers", join(from, handlers), "--outfile", out] : [];
    const build = Bun.spawnSync([process.execPath, "run", join(from, "build.ts"), ...args], { cwd: from, stdout: "inherit", stderr: "inherit" });
    if (build.exitCode !== 0) throw new Error(`bench: building ${out} failed`);
    built.add(out);
  }
  return out;
}

export async function installExampleCRD(sandbox: Pick<Sandbox, "url">): Promise<void> {
  const { parse } = await import("yaml");
  const crd = parse(readFileSync(join(root, "handlers/kobunexample.crd.yaml"), "utf8"));
  const response = await fetch(`${sandbox.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`, {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(crd),
  });
  if (!response.ok && response.status !== 409) throw new Error(`bench: installing the CRD failed: ${response.status} ${await response.text()}`);
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function round(value: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

export function report(name: string, figures: Record<string, unknown>): void {
  console.log(JSON.stringify({ bench: name, ...figures }));
}

/** Puts `figures` into bench/results.json under `key`, keeping the other benches' keys. */
export function saveResults(key: string, figures: Record<string, unknown>): void {
  const path = join(root, "bench/results.json");
  const results = existsSync(path) ? JSON.parse(readFileSync(path, "utf8")) : {};
  results[key] = { measuredAt: new Date().toISOString(), ...figures };
  writeFileSync(path, `${JSON.stringify(results, null, 2)}\n`);
}

/** Resolves when `pred` holds (it may ask a sandbox process), polling each ms (bench processes only; bounded). */
export async function until(pred: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await pred())) {
    if (performance.now() > deadline) throw new Error(`bench: timed out waiting for ${what}`);
    await Bun.sleep(1);
  }
}

/** A sandbox in its own process (sandbox-server.ts): its URL, kubeconfig, commands, stop. */
export interface SandboxProcess {
  url: string;
  kubeconfigPath: string;
  /** sends one command line, resolves with the sandbox's JSON answer */
  ask(cmd: string): Promise<any>;
  /** open watch streams, as the sandbox counts them */
  watches(): Promise<number>;
  /** the sandbox process's CPU µs so far */
  cpuUs(): Promise<number>;
  stop(): Promise<void>;
}

/** Starts bench/sandbox-server.ts; rejects if it does not listen within 20 s. */
export async function spawnSandbox(historySize = 1000): Promise<SandboxProcess> {
  // KOBUN_BENCH_SANDBOX_ARGS: extra bun flags for the sandbox process (e.g. --cpu-prof-md)
  const flags = (process.env.KOBUN_BENCH_SANDBOX_ARGS ?? "").split(" ").filter(Boolean);
  const child = Bun.spawn([process.execPath, ...flags, join(import.meta.dir, "sandbox-server.ts"), String(historySize)], { stdin: "pipe", stdout: "pipe", stderr: "inherit" });
  const lines = lineReader(child.stdout);
  let timer: Timer | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error("bench: the sandbox process did not start within 20 s")), 20_000)));
  let started: { url: string; kubeconfigPath: string };
  try {
    started = JSON.parse(await Promise.race([lines.next(), timeout]));
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  } finally {
    clearTimeout(timer);
  }
  // one command at a time: answers come back in order on one stdout
  let queue: Promise<unknown> = Promise.resolve();
  const ask = (cmd: string): Promise<any> => {
    const answer = queue.then(async () => {
      child.stdin.write(cmd + "\n");
      await child.stdin.flush();
      return JSON.parse(await lines.next());
    });
    queue = answer.catch(() => {});
    return answer;
  };
  return {
    ...started, ask,
    watches: async () => (await ask("watches")).watches,
    cpuUs: async () => (await ask("cpu")).cpuUs,
    async stop() {
      if (child.exitCode !== null) return;
      child.stdin.write("stop\n");
      await child.stdin.flush();
      child.stdin.end();
      const killer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await child.exited;
      clearTimeout(killer);
    },
  };
}

/** Lines from a child process's stdout, one at a time (the benches' child-sandbox protocol). */
export function lineReader(stream: ReadableStream<Uint8Array>): { next(): Promise<string> } {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  return {
    async next(): Promise<string> {
      for (;;) {
        const nl = buffer.indexOf("\n");
        if (nl >= 0) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          return line;
        }
        const { done, value } = await reader.read();
        if (done) throw new Error("sandbox child ended");
        buffer += decoder.decode(value, { stream: true });
      }
    },
  };
}
