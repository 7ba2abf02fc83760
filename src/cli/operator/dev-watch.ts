// `kobun dev --watch`: one sandbox for the whole session, and the operator in a child process
// ("worker") that is replaced when a handler file changes. A module cannot be unloaded from a
// Bun process, so a new generation of handlers needs a new process; the sandbox (and so every
// object in it) stays in this one.
//
// A swap: the new worker loads the handlers and installs their CRDs; only when that succeeds
// is the old worker stopped and the new one told to start its operator. An edit that does not
// load (a syntax error, a module that throws) prints why and leaves the old worker running.
// tsc checks the project at the same time and prints its errors, without holding the swap.

import { existsSync, watch, type FSWatcher } from "node:fs";
import { join, resolve } from "node:path";

/** The lines a worker and the session exchange (stdout of the worker, stdin of the worker). */
export const WORKER_READY = "kobun-dev-worker: ready";
export const WORKER_GO = "go";
/** Printed by the session when a generation runs; tests and users wait for it. */
export const GENERATION_RUNNING = "kobun dev: handlers running, generation";
export const TYPECHECK_CLEAN = "kobun dev: typecheck clean";
export const TYPECHECK_FAILED = "kobun dev: typecheck failed (the edit runs anyway; fix it):";

interface Worker {
  child: Bun.Subprocess<"pipe", "pipe", "inherit">;
  /** Resolves true once the worker loaded its handlers and installed their CRDs, false if it exited first. */
  ready: Promise<boolean>;
  /** What the worker printed before it was ready: its load error, if it failed. */
  output(): string;
}

export interface WatchOptions {
  /** The files and directories of the handlers (watched recursively). */
  paths: string[];
  /** The sandbox's kubeconfig: the only cluster the workers ever talk to. */
  kubeconfig: string;
  /** `kobun run` flags to pass on to each worker (namespaces, config, log level...). */
  flags: string[];
  cwd: string;
  signal: AbortSignal;
}

/** Runs generations of workers until `signal` aborts; resolves once the last worker has exited. */
export async function watchHandlers(o: WatchOptions): Promise<void> {
  let running: Worker | undefined;
  let generation = 0;
  let pending: Promise<void> = Promise.resolve();
  let typecheck: Bun.Subprocess | undefined;
  const swap = async () => {
    if (o.signal.aborted) return;
    const started = performance.now();
    // tsc reports beside the swap rather than gating it: it takes seconds where a load takes
    // a fraction of one, and a type error is shown while the edit runs.
    typecheck?.kill();
    typecheck = reportTypecheck(o.cwd);
    const next = spawnWorker(o);
    if (!(await next.ready)) {
      await next.child.exited;
      const meanwhile = running ? "the previous handlers keep running" : "no handlers run yet";
      console.error(`kobun dev: the edit does not load; ${meanwhile}:\n${next.output().trim()}`);
      return;
    }
    if (running) await stopWorker(running);
    next.child.stdin.write(`${WORKER_GO}\n`);
    next.child.stdin.flush();
    running = next;
    generation += 1;
    console.log(`${GENERATION_RUNNING} ${generation} (${Math.round(performance.now() - started)} ms from the change)`);
  };
  // Edits arrive as bursts of events (an editor writes, renames, touches): one swap per burst,
  // and never two swaps at once.
  let timer: Timer | undefined;
  const changed = () => {
    clearTimeout(timer);
    timer = setTimeout(() => { pending = pending.then(swap); }, 30);
  };
  const watchers = o.paths.map((path) => watchPath(resolve(o.cwd, path), changed));
  pending = pending.then(swap);
  await new Promise<void>((done) => o.signal.addEventListener("abort", () => done(), { once: true }));
  clearTimeout(timer);
  for (const w of watchers) w.close();
  await pending;
  if (running) await stopWorker(running);
}

function watchPath(path: string, changed: () => void): FSWatcher {
  return watch(path, { recursive: true }, (_event, name) => {
    if (name && /(^|[/\\])(node_modules|\.)/.test(String(name))) return;
    changed();
  });
}

function spawnWorker(o: WatchOptions): Worker {
  // Bun.main is kobun's cli.ts (from source, or the package's): the same entry, as a worker.
  const child = Bun.spawn([process.execPath, Bun.main, "dev", `--worker=${o.kubeconfig}`, ...o.flags, ...o.paths], {
    cwd: o.cwd, stdin: "pipe", stdout: "pipe", stderr: "inherit", env: process.env,
  });
  let text = "";
  const ready = (async () => {
    const decoder = new TextDecoder();
    const reader = child.stdout.getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return false;
      text += decoder.decode(value, { stream: true });
      if (text.includes(WORKER_READY)) break;
    }
    // From now on the worker's own output is the operator's: pass it through.
    void (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        process.stdout.write(value);
      }
    })();
    return true;
  })();
  return { child, ready, output: () => text };
}

async function stopWorker(worker: Worker): Promise<void> {
  worker.child.kill("SIGTERM");
  await worker.child.exited;
}

/** Prints tsc's errors for the project in `cwd`, or that it is clean; skipped without a tsc or tsconfig. */
function reportTypecheck(cwd: string): Bun.Subprocess | undefined {
  const tsc = join(cwd, "node_modules", ".bin", "tsc");
  if (!existsSync(tsc) || !existsSync(join(cwd, "tsconfig.json"))) return undefined;
  const child = Bun.spawn([tsc, "--noEmit", "--pretty", "false", "-p", cwd], { cwd, stdout: "pipe", stderr: "pipe" });
  const output = [new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited] as const;
  void Promise.all(output).then(([out, err, code]) => {
    if (child.signalCode !== null) return;          // killed: a newer edit's check replaced it
    if (code === 0) console.log(TYPECHECK_CLEAN);
    else console.error(`${TYPECHECK_FAILED}\n${(out + err).trim()}`);
  });
  return child;
}
