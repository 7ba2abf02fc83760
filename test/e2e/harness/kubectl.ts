// Runs the real kubectl (built from Go modules by test/cluster/build.sh, next to kube-apiserver)
// against a target, always with an explicit --kubeconfig: KUBECONFIG is never passed on and HOME
// is a temp dir of this test process, so kubectl's discovery and OpenAPI caches
// (~/.kube/cache) belong to this run only. `normalise` strips what legitimately differs between
// two servers (timestamps, ages, uids, resourceVersions, ports), so outputs can be compared.

import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { binDir } from "../../cluster/cluster.ts";

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
  async run(args: string[], { stdin, timeoutMs = 30_000 }: { stdin?: string; timeoutMs?: number } = {}): Promise<KubectlResult> {
    const env: Record<string, string> = { HOME: this.home, NO_COLOR: "1", TZ: "UTC", LANG: "C" };
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
  async ok(args: string[], opts: { stdin?: string; timeoutMs?: number } = {}): Promise<string> {
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
 * re-spaced to single spaces (their widths follow the values normalised here).
 */
export function normalise(text: string): string {
  return text
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, "<time>")
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<uid>")
    .replace(/(resourceVersion: |"resourceVersion": ?)"?\d+"?/g, "$1<rv>")
    // ages ("5s", "2m3s", "4h", "3d") stand alone in a column, never inside a name
    .replace(/(?<=^|\s)(\d+[smhd](\d+[smh])?|<unknown>|<invalid>)(?=\s|$)/gm, "<age>")
    .replace(/127\.0\.0\.1:\d+/g, "127.0.0.1:<port>")
    .split("\n")
    .map((l) => l.replace(/ {2,}/g, "  ").trimEnd())
    .join("\n");
}
