// Runs the real kubectl (built from Go modules by test/cluster/build.sh, next to kube-apiserver)
// against a target, always with an explicit --kubeconfig: KUBECONFIG is never passed on and HOME
// is a temp dir of this test process, so kubectl's discovery and OpenAPI caches
// (~/.kube/cache) belong to this run only. `normalise` strips what legitimately differs between
// two servers (timestamps, ages, uids, resourceVersions, ports), so outputs can be compared.

import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "bun:test";
import { binDir } from "../../cluster/cluster.ts";
import { startTarget, type Target, type TargetName } from "./target.ts";

export const KUBECTL = process.env.KOBUN_E2E_KUBECTL ?? join(binDir(), "kubectl");

export interface KubectlResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export class Kubectl {
  readonly home: string;

  constructor(readonly kubeconfigPath: string) {
    if (!existsSync(KUBECTL)) {
      throw new Error(`${KUBECTL} is missing: run test/cluster/build.sh (or \`bun test/e2e/run.ts\`, which runs it)`);
    }
    this.home = mkdtempSync(join(tmpdir(), "kobun-e2e-kubectl-"));
  }

  /** `kubectl --kubeconfig K ...args`, bounded by `timeoutMs` (killed after it: code null). */
  async run(args: string[], { stdin, timeoutMs = 30_000, env: extra = {} }: { stdin?: string; timeoutMs?: number; env?: Record<string, string> } = {}): Promise<KubectlResult> {
    const env: Record<string, string> = { HOME: this.home, NO_COLOR: "1", TZ: "UTC", LANG: "C", ...extra };
    if (process.env.PATH) env.PATH = process.env.PATH;
    const proc = Bun.spawn([KUBECTL, "--kubeconfig", this.kubeconfigPath, ...args], {
      cwd: this.home, env, stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin), stdout: "pipe", stderr: "pipe",
    });
    const killer = setTimeout(() => proc.kill("SIGKILL"), timeoutMs);
    const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
    await proc.exited;
    clearTimeout(killer);
    return { code: proc.signalCode ? null : proc.exitCode, stdout, stderr };
  }

  /** like run(), but a non-zero exit throws with the command and kubectl's stderr */
  async ok(args: string[], opts: { stdin?: string; timeoutMs?: number; env?: Record<string, string> } = {}): Promise<string> {
    const r = await this.run(args, opts);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(" ")} → exit ${r.code}: ${r.stderr.trim() || r.stdout.trim()}`);
    return r.stdout;
  }

  /** a file in this kubectl's temp home (for `-f`) */
  file(name: string, text: string): string {
    const path = join(this.home, name);
    writeFileSync(path, text);
    return path;
  }

  /** a long-running kubectl (e.g. `get -w`): its output so far, and a way to stop it */
  spawn(args: string[]): { output: () => string; stop: () => Promise<void> } {
    const env: Record<string, string> = { HOME: this.home, NO_COLOR: "1", TZ: "UTC", LANG: "C" };
    if (process.env.PATH) env.PATH = process.env.PATH;
    const proc = Bun.spawn([KUBECTL, "--kubeconfig", this.kubeconfigPath, ...args], { cwd: this.home, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    let text = "";
    const pump = (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of proc.stdout as ReadableStream<Uint8Array>) text += decoder.decode(chunk, { stream: true });
    })();
    return {
      output: () => text,
      async stop() {
        proc.kill("SIGKILL");
        await proc.exited;
        await pump.catch(() => {});
      },
    };
  }

  close(): void {
    rmSync(this.home, { recursive: true, force: true });
  }
}

/**
 * What differs between two API servers for the same commands: times and ages, uids,
 * resourceVersions, generated names' suffixes, ports and versions. Table columns are
 * re-spaced to two spaces (their widths follow the values normalised here), unless `respace` is false.
 */
export function normalise(text: string, { respace = true } = {}): string {
  const stable = text
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, "<time>")
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<uid>")
    .replace(/(resourceVersion: |"resourceVersion": ?)"?\d+"?/g, "$1<rv>")
    // ages ("5s", "2m3s", "4h", "3d") stand alone in a column, never inside a name
    .replace(/(?<=^|\s)(\d+[smhd](\d+[smh])?|<unknown>|<invalid>)(?=\s|$)/gm, "<age>")
    .replace(/127\.0\.0\.1:\d+/g, "127.0.0.1:<port>");
  // YAML keeps its indentation (respace: false)
  return !respace ? stable : stable
    .split("\n")
    .map((l) => l.replace(/ {2,}/g, "  ").trimEnd())
    .join("\n");
}

/**
 * A describe block's target and kubectl, started before its tests (with `crdFiles` installed)
 * and stopped after them; `need()` throws the setup's error in each test instead of hiding it.
 */
export function kubectlTarget(targetName: TargetName, crdFiles: string[]): () => { t: Target; k: Kubectl } {
  let target: Target | undefined;
  let kubectl: Kubectl | undefined;
  let setupError: unknown;
  beforeAll(async () => {
    try {
      target = await startTarget(targetName, { crds: crdFiles });
      kubectl = new Kubectl(target.kubeconfigPath);
    } catch (e) {
      setupError = e;
    }
  }, 90_000);
  afterAll(async () => {
    kubectl?.close();
    await target?.stop();
  }, 30_000);
  return () => {
    if (!target || !kubectl) throw new Error(`kubectl e2e on "${targetName}" has no target: ${setupError instanceof Error ? setupError.message : String(setupError)}`);
    return { t: target, k: kubectl };
  };
}
