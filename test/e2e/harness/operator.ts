// Runs a compiled kobun binary as a subprocess against a target, with an explicit
// --kubeconfig and a scrubbed environment (no KUBECONFIG, HOME in a temp dir, cwd in a temp
// dir so no kobun.yaml is picked up), and collects its log lines (stderr) for assertions.

import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export const ROOT = resolve(import.meta.dir, "../../..");
/** The example operator: `npm run build` (handlers/). */
export const KOBUN = process.env.KOBUN_E2E_BINARY ?? join(ROOT, "dist/kobun");
/** The e2e-only handlers (test/e2e/handlers) built into a second binary by run.ts. */
export const KOBUN_E2E = process.env.KOBUN_E2E_HANDLERS_BINARY ?? join(ROOT, "dist/kobun-e2e");

type Proc = ReturnType<typeof Bun.spawn>;

const running = new Set<Operator>();
// Last resort when the test process exits without afterAll (a crash, a bail-out).
process.on("exit", () => {
  for (const op of running) op.kill();
});

export class Operator {
  readonly lines: string[] = [];
  readonly startedAt = Date.now();
  private readonly proc: Proc;
  private readonly home: string;
  private waiters: { re: RegExp; from: number; resolve: (line: string) => void }[] = [];
  private readonly drained: Promise<void>;

  constructor(readonly label: string, binary: string, args: string[], extraEnv: Record<string, string> = {}) {
    if (!existsSync(binary)) throw new Error(`${binary} is missing: run \`bun test/e2e/run.ts\` (it builds the binaries)`);
    this.home = mkdtempSync(join(tmpdir(), "kobun-e2e-home-"));
    const env: Record<string, string> = {};
    for (const k of ["PATH", "TZ", "LANG"]) if (process.env[k]) env[k] = process.env[k]!;
    Object.assign(env, { HOME: this.home, NO_COLOR: "1" }, extraEnv);
    this.proc = Bun.spawn([binary, ...args], { cwd: this.home, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    running.add(this);
    this.drained = Promise.all([this.pump(this.proc.stdout as ReadableStream<Uint8Array>), this.pump(this.proc.stderr as ReadableStream<Uint8Array>)]).then(() => {});
  }

  /** SIGKILL at once, without waiting (for the exit hook). */
  kill(): void {
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill("SIGKILL");
  }

  get pid(): number {
    return this.proc.pid;
  }

  get exitCode(): number | null {
    return this.proc.exitCode;
  }

  private async pump(stream: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buf = "";
    const take = (line: string) => {
      this.lines.push(line);
      if (process.env.KOBUN_E2E_VERBOSE) process.stderr.write(`[${this.label}] ${line}\n`);
      for (const w of [...this.waiters]) {
        if (w.re.test(line)) {
          this.waiters.splice(this.waiters.indexOf(w), 1);
          w.resolve(line);
        }
      }
    };
    for await (const chunk of stream) {
      buf += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        take(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
      }
    }
    if (buf) take(buf);
  }

  /** Resolves with the first log line (from index `from`, default 0) matching `re`, or fails after `timeoutMs`. */
  waitForLog(re: RegExp, timeoutMs = 10_000, from = 0): Promise<string> {
    const seen = this.lines.slice(from).find((l) => re.test(l));
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise<string>((resolve, reject) => {
      const waiter = { re, from, resolve: (l: string) => { clearTimeout(timer); resolve(l); } };
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        reject(new Error(`${this.label}: no log line matching ${re} within ${timeoutMs} ms (exit=${this.proc.exitCode})\n${this.tail()}`));
      }, timeoutMs);
      this.waiters.push(waiter);
      this.proc.exited.then(() => setTimeout(() => {
        if (this.waiters.includes(waiter)) {
          this.waiters.splice(this.waiters.indexOf(waiter), 1);
          clearTimeout(timer);
          reject(new Error(`${this.label}: exited (${this.proc.exitCode}) before logging ${re}\n${this.tail()}`));
        }
      }, 50));
    });
  }

  /** Whether any log line matches. */
  logged(re: RegExp, from = 0): boolean {
    return this.lines.slice(from).some((l) => re.test(l));
  }

  tail(n = 40): string {
    return this.lines.slice(-n).map((l) => `  | ${l}`).join("\n");
  }

  /** Sends `signal`, waits (bounded) for the exit; returns the exit code and the time it took. */
  async stop(signal: NodeJS.Signals = "SIGTERM", timeoutMs = 10_000): Promise<{ code: number | null; ms: number }> {
    const t0 = performance.now();
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill(signal);
    const timer = setTimeout(() => this.proc.kill("SIGKILL"), timeoutMs);
    const code = await this.proc.exited;
    const ms = performance.now() - t0;
    clearTimeout(timer);
    await this.drained;
    running.delete(this);
    rmSync(this.home, { recursive: true, force: true });
    if (ms >= timeoutMs) throw new Error(`${this.label}: did not exit within ${timeoutMs} ms of ${signal}; killed\n${this.tail()}`);
    return { code, ms };
  }

  /** Waits for the process to exit by itself (bounded). */
  async exited(timeoutMs = 10_000): Promise<number> {
    const code = await Promise.race([this.proc.exited, new Promise<"timeout">((r) => setTimeout(() => r("timeout"), timeoutMs))]);
    if (code === "timeout") throw new Error(`${this.label}: still running after ${timeoutMs} ms\n${this.tail()}`);
    await this.drained;
    return code;
  }
}

/** `kobun run --kubeconfig <path> --log-format plain -v ...args` with the given binary (and extra environment). */
export function startOperator(label: string, kubeconfigPath: string, args: string[], binary = KOBUN, env: Record<string, string> = {}): Operator {
  return new Operator(label, binary, ["run", "--kubeconfig", kubeconfigPath, "-v", ...args], env);
}

/** One-shot commands (`kobun freeze`, `kobun version`): run to completion, bounded. */
export async function runOnce(binary: string, args: string[], timeoutMs = 15_000): Promise<{ code: number; out: string }> {
  const op = new Operator(args[0] ?? "kobun", binary, args);
  const code = await op.exited(timeoutMs);
  await op.stop();
  return { code, out: op.lines.join("\n") };
}

/** SIGKILL whatever a failed test left running. */
export async function killAllOperators(): Promise<void> {
  await Promise.all([...running].map((op) => op.stop("SIGKILL", 5000).catch(() => {})));
}
