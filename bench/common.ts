// Shared bench plumbing: a built binary, the example CRD in a sandbox, medians, JSON output.
// Every figure is reported beside a baseline measured in the same run, as a ratio.

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Sandbox } from "../src/sandbox/index.ts";

export const root = join(import.meta.dir, "..");
export const binary = join(root, "dist/kobun");

let built = false;

/** Builds dist/kobun once per bench process (≈ 1 s): one left from an older checkout would measure old code. */
export function ensureBinary(): string {
  if (!built) {
    const build = Bun.spawnSync([process.execPath, "run", join(root, "build.ts")], { cwd: root, stdout: "inherit", stderr: "inherit" });
    if (build.exitCode !== 0) throw new Error("bench: building dist/kobun failed");
    built = true;
  }
  return binary;
}

export async function installExampleCRD(sandbox: Sandbox): Promise<void> {
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

/** Resolves when `pred` holds, polling `read` each ms (bench processes only; bounded). */
export async function until(pred: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!pred()) {
    if (performance.now() > deadline) throw new Error(`bench: timed out waiting for ${what}`);
    await Bun.sleep(1);
  }
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
