// Running the operator CLI from source as a subprocess, and reading its log lines as they come.

import { join } from "node:path";
import type { Subprocess } from "bun";

export const repo = join(import.meta.dir, "../..");

export interface OperatorProcess {
  child: Subprocess<"ignore", "pipe", "pipe">;
  /** Resolves with the first stderr line matching `pattern` (rejects after `timeoutMs` or at exit). */
  line(pattern: RegExp, timeoutMs?: number): Promise<string>;
  lines: string[];
}

/** Starts `bun src/cli.ts <args>` with a clean environment (no KUBECONFIG, no HOME kubeconfig). */
export function startOperator(args: string[]): OperatorProcess {
  const child = Bun.spawn([process.execPath, join(repo, "src/cli.ts"), ...args], {
    cwd: repo,
    env: { PATH: process.env.PATH ?? "", HOME: "/nonexistent" },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const lines: string[] = [];
  const waiters = new Set<{ pattern: RegExp; resolve(line: string): void }>();
  let ended = false;
  const endWaiters = new Set<() => void>();
  (async () => {
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const chunk of child.stderr) {
      buffer += decoder.decode(chunk, { stream: true });
      let newline: number;
      while ((newline = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        lines.push(line);
        for (const waiter of waiters) if (waiter.pattern.test(line)) {
          waiters.delete(waiter);
          waiter.resolve(line);
        }
      }
    }
    ended = true;
    for (const wake of endWaiters) wake();
  })();
  return {
    child,
    lines,
    line(pattern, timeoutMs = 10_000) {
      const seen = lines.find((l) => pattern.test(l));
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const fail = (why: string) => () => {
          waiters.delete(waiter);
          reject(new Error(`${why} waiting for ${pattern}; stderr so far:\n${lines.join("\n")}`));
        };
        const timer = setTimeout(fail("timed out"), timeoutMs);
        const waiter = { pattern, resolve: (l: string) => (clearTimeout(timer), resolve(l)) };
        waiters.add(waiter);
        if (ended) fail("process ended")();
        else endWaiters.add(() => waiters.has(waiter) && (clearTimeout(timer), fail("process ended")()));
      });
    },
  };
}

/**
 * Polls a condition that has no event to await (the sandbox's open-watch count, log lines of
 * an in-process operator, health state); bounded, and says what it waited for on timeout.
 */
export async function eventually(pred: () => boolean | Promise<boolean>, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await pred())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(5);
  }
}
