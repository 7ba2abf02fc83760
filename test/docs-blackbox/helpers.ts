// What the docs-blackbox tests share: a bound on a wait for something a handler does (not an
// object's state, which the kit's until awaits), an object's diff base, an operator to stop and start
// again, and a scratch folder under the checkout's .tmp/, where a handler module's `import "kobun"`
// resolves as it does in a project.

import { mkdirSync, mkdtempSync } from "node:fs";
import { join } from "node:path";
import { Logger, memorySink, resolveSettings, run, type Registry } from "kobun";

export const root = join(import.meta.dir, "..", "..");

/** The diff base kobun keeps on an object (its last handled configuration), or undefined before a handler ran. */
export function lastHandled(o: { metadata: { annotations?: Record<string, string> } }): string | undefined {
  return o.metadata.annotations?.["kobun.dev/last-handled-configuration"];
}

/** `promise`, or an error naming `what` once `ms` have passed; leaves no timer behind. */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** A fresh folder under .tmp/ (git ignores it); the caller removes it. */
export function scratchDir(): string {
  mkdirSync(join(root, ".tmp"), { recursive: true });
  return mkdtempSync(join(root, ".tmp", "docs-blackbox-"));
}

/**
 * An operator run() over the sandbox of `kubeconfig` (its "default" namespace, standalone), its info log in memory;
 * `stop` aborts it and waits for it to end. For tests that stop one operator and start the next.
 */
export function operator(kubeconfig: string, registry: Registry) {
  const stop = new AbortController();
  const settings = resolveSettings({ flags: { kubeconfig, namespaces: ["default"], standalone: true } });
  const logs = memorySink("info", "plain", { max: 1000 });
  const running = run({ signal: stop.signal, settings, registry, logger: new Logger(logs) });
  return { logs, stop: async () => { stop.abort(); await running; } };
}
