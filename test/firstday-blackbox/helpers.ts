// What the first-day tests share: the `kobun` command run as a user runs it (a child process,
// with no KUBECONFIG and a HOME that holds none, so nothing but the kubeconfig a test writes is
// ever read), a child's output read until a line says what a test waits for, and handler
// modules written to a scratch folder under .tmp/ (where `import "kobun"` resolves as in a project).

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { root, within } from "../docs-blackbox/helpers.ts";

export { root, scratchDir, within } from "../docs-blackbox/helpers.ts";
export const cli = join(root, "src", "cli.ts");

/** The environment of a user's shell with no cluster configured. */
export function userEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? "", HOME: "/nonexistent", NO_COLOR: "1", ...extra };
}

export interface Finished {
  code: number;
  stdout: string;
  stderr: string;
}

/** `argv` to completion (killed after `ms`, which then fails the test by its code). */
export async function finish(argv: string[], options: { cwd?: string; env?: Record<string, string>; ms?: number } = {}): Promise<Finished> {
  const child = Bun.spawn(argv, { cwd: options.cwd ?? root, env: options.env ?? userEnv(), stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const killer = setTimeout(() => child.kill("SIGKILL"), options.ms ?? 20_000);
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  clearTimeout(killer);
  return { code, stdout, stderr };
}

/** `kobun ARGS` from source, as `npx kobun` runs it. */
export function kobun(args: string[], options: { cwd?: string; env?: Record<string, string>; ms?: number } = {}): Promise<Finished> {
  return finish([process.execPath, cli, ...args], options);
}

/** A running command whose stdout and stderr are read together as they come. */
export class Running {
  readonly child: Bun.Subprocess<"ignore", "pipe", "pipe">;
  private text = "";
  private readonly waiters = new Set<() => void>();
  private readonly drained: Promise<void>;

  constructor(argv: string[], options: { cwd?: string; env?: Record<string, string> } = {}) {
    this.child = Bun.spawn(argv, { cwd: options.cwd ?? root, env: options.env ?? userEnv(), stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    const read = async (stream: AsyncIterable<Uint8Array>) => {
      const decoder = new TextDecoder();
      for await (const chunk of stream) {
        this.text += decoder.decode(chunk, { stream: true });
        for (const wake of this.waiters) wake();
      }
    };
    this.drained = Promise.all([read(this.child.stdout), read(this.child.stderr)]).then(() => this.waiters.forEach((wake) => wake()));
  }

  get output(): string {
    return this.text;
  }

  /** Resolves once the output matches `pattern`; fails after `ms`, or if the process ended without it. */
  async until(pattern: RegExp, ms = 15_000): Promise<RegExpMatchArray> {
    const seen = Promise.withResolvers<RegExpMatchArray>();
    const check = () => {
      const match = this.text.match(pattern);
      if (match) seen.resolve(match);
      else if (this.child.exitCode !== null) seen.reject(new Error(`exited ${this.child.exitCode} before ${pattern}:\n${this.text}`));
    };
    this.waiters.add(check);
    void this.child.exited.then(() => this.drained).then(check);
    check();
    try {
      return await within(seen.promise, ms, `${pattern} in the output:\n${this.text}`);
    } finally {
      this.waiters.delete(check);
    }
  }

  /** The exit code, within `ms`; the output is complete once it resolves. */
  async exited(ms = 15_000): Promise<number> {
    const code = await within(this.child.exited, ms, `the exit (output so far:\n${this.text})`);
    await this.drained;
    return code;
  }

  kill(): void {
    this.child.kill("SIGKILL");
  }
}

/** Writes `source` as handler module `name` in `dir`; returns its path. */
export function handlerModule(dir: string, name: string, source: string): string {
  const path = join(dir, name);
  writeFileSync(path, source);
  return path;
}

/** A ConfigMap, made as kubectl would: a POST to the API server at `server.url`. */
export async function createConfigMap(
  server: { url: string }, name: string, labels: Record<string, string>, namespace = "default",
): Promise<void> {
  const response = await fetch(`${server.url}/api/v1/namespaces/${namespace}/configmaps`, {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ metadata: { name, labels } }),
  });
  if (response.status !== 201) throw new Error(`creating ConfigMap ${name}: ${response.status} ${await response.text()}`);
}

/** A kubeconfig for `server` with `token` (or none), written into `dir`. */
export function kubeconfigFile(dir: string, name: string, server: string, token?: string): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify({
    apiVersion: "v1", kind: "Config", "current-context": "c",
    clusters: [{ name: "c", cluster: { server } }],
    users: [{ name: "u", user: token === undefined ? {} : { token } }],
    contexts: [{ name: "c", context: { cluster: "c", user: "u" } }],
  }), { mode: 0o600 });
  return path;
}

/**
 * The object at `path` (a collection's path + "/" + name) once `holds` is true of it, as a watch
 * shows it (never by polling); fails after `ms` naming the last state seen.
 */
export async function untilObject(
  server: string, token: string, path: string, holds: (object: any) => boolean, ms = 15_000,
): Promise<any> {
  const slash = path.lastIndexOf("/");
  const [collection, name] = [path.slice(0, slash), path.slice(slash + 1)];
  const headers = { authorization: `Bearer ${token}` };
  const stop = new AbortController();
  let last: unknown;
  const watching = (async () => {
    const url = `${server}${collection}?watch=true&fieldSelector=metadata.name%3D${name}&allowWatchBookmarks=false`;
    const response = await fetch(url, { headers, signal: stop.signal });
    if (!response.ok) throw new Error(`the watch of ${path}: HTTP ${response.status} ${await response.text()}`);
    let buffer = "";
    const decoder = new TextDecoder();
    for await (const chunk of response.body!) {
      buffer += decoder.decode(chunk, { stream: true });
      let newline: number;
      while ((newline = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        if (!line.trim()) continue;
        const event = JSON.parse(line);
        last = event.object;
        if (event.type !== "DELETED" && holds(event.object)) return event.object;
      }
    }
    throw new Error(`the watch of ${path} ended`);
  })();
  try {
    return await within(watching, ms, `${path} as awaited (last seen: ${JSON.stringify(last)})`);
  } finally {
    stop.abort();
    watching.catch(() => {});
  }
}
