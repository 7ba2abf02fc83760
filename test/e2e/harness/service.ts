// A real component (Prometheus, Jaeger) run as a child process for the e2e suite: spawned in its
// own temp dir, awaited until `ready` says so (bounded), stopped with SIGTERM then SIGKILL.
import { rmSync } from "node:fs";

export interface Service {
  stop(): Promise<void>;
}

export async function startService(name: string, argv: string[], dir: string, url: string, ready: () => Promise<boolean>): Promise<Service> {
  const proc = Bun.spawn(argv, {
    cwd: dir, stdin: "ignore", stdout: "ignore", stderr: process.env.KOBUN_E2E_VERBOSE ? "inherit" : "ignore",
  });
  const stop = async () => {
    proc.kill("SIGTERM");
    const timer = setTimeout(() => proc.kill("SIGKILL"), 5000);
    await proc.exited;
    clearTimeout(timer);
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 30_000;
  while (!(await ready())) {
    if (proc.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`${name} did not become ready at ${url} (exit ${proc.exitCode})`);
    }
    await Bun.sleep(100);
  }
  return { stop };
}
