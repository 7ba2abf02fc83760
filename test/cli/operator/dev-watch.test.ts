// `kobun dev --watch` in a project of its own (a temp dir whose node_modules links to this
// checkout): an edit of a handler file is live in a new operator while the sandbox and its
// objects stay; an edit that does not load keeps the previous handlers running and says why;
// a type error is printed by tsc.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeClient } from "../../../src/kube/client.ts";
import type { KubeObject, Resource } from "../../../src/kube/types.ts";
import { awaitObject } from "../../../src/testing/until.ts";
import { Logger, memorySink } from "../../../src/util/log.ts";

const repo = join(import.meta.dir, "../../..");
const configmaps: Resource = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false };
const logger = new Logger(memorySink("error"));

const handler = (greeting: string, extra = "") =>
  `import { on } from "kobun";\non.create("v1/configmaps", ({ patch }) => { patch.metadata.labels = { greeting: "${greeting}" }; }, { id: "greet" });\n${extra}`;

let dir: string;
let session: Bun.Subprocess<"ignore", "pipe", "pipe">;
let client: KubeClient;
let out = "";
let err = "";
const waiters = new Set<() => void>();

/** Resolves once stdout+stderr of the session, past `from`, match `pattern`; fails after `ms`. */
function printed(pattern: RegExp, from: number, ms = 45_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const m = (out + err).slice(from).match(pattern);
      if (!m) return false;
      waiters.delete(check as () => void);
      clearTimeout(timer);
      resolve(m[0]);
      return true;
    };
    const timer = setTimeout(() => { waiters.delete(check as () => void); reject(new Error(`not printed within ${ms} ms: ${pattern}\n--- stdout\n${out}\n--- stderr\n${err}`)); }, ms);
    if (!check()) waiters.add(check as () => void);
  });
}

async function pump(stream: ReadableStream<Uint8Array>, into: (text: string) => void): Promise<void> {
  const decoder = new TextDecoder();
  for await (const chunk of stream) {
    into(decoder.decode(chunk, { stream: true }));
    for (const w of [...waiters]) w();
  }
}

async function greetingOf(name: string, want: string): Promise<KubeObject | undefined> {
  await client.create(configmaps, "default", { apiVersion: "v1", kind: "ConfigMap", metadata: { name } });
  return awaitObject({
    client, resource: configmaps, namespace: "default", name, logger, signal: new AbortController().signal, timeoutMs: 10_000,
    what: `labels.greeting == ${want}`, test: (o) => o?.metadata?.labels?.greeting === want,
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "kobun-dev-watch-"));
  mkdirSync(join(dir, "handlers"));
  mkdirSync(join(dir, "node_modules", ".bin"), { recursive: true });
  symlinkSync(repo, join(dir, "node_modules", "kobun"));
  symlinkSync(join(repo, "node_modules", "@types"), join(dir, "node_modules", "@types"));
  symlinkSync(join(repo, "node_modules", ".bin", "tsc"), join(dir, "node_modules", ".bin", "tsc"));
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({
    compilerOptions: { target: "ESNext", lib: ["ESNext"], module: "Preserve", moduleResolution: "bundler", strict: true, noEmit: true, skipLibCheck: true, allowImportingTsExtensions: true, types: ["bun"] },
    include: ["handlers"],
  }));
  writeFileSync(join(dir, "handlers", "hello.ts"), handler("v1"));
  session = Bun.spawn([process.execPath, join(repo, "src/cli.ts"), "dev", "--watch", "-n", "default", "-q"], {
    cwd: dir, env: { PATH: process.env.PATH ?? "", HOME: "/nonexistent" }, stdin: "ignore", stdout: "pipe", stderr: "pipe",
  });
  void pump(session.stdout, (t) => { out += t; });
  void pump(session.stderr, (t) => { err += t; });
  await printed(/handlers running, generation 1/, 0);
  const kubeconfig = out.match(/kubectl --kubeconfig (\S+)/)![1]!;
  client = await KubeClient.connect({ kubeconfig, logger });
}, 60_000);

afterAll(async () => {
  session?.kill("SIGTERM");
  await session?.exited;
  rmSync(dir, { recursive: true, force: true });
});

test("an edit of a handler file is live in a new operator, with the sandbox and its objects kept", async () => {
  expect((await greetingOf("first", "v1"))?.metadata?.labels).toEqual({ greeting: "v1" });
  const from = (out + err).length;
  const edited = performance.now();
  writeFileSync(join(dir, "handlers", "hello.ts"), handler("v2"));
  await printed(/handlers running, generation 2/, from);
  expect((await greetingOf("second", "v2"))?.metadata?.labels).toEqual({ greeting: "v2" });
  console.log(`dev --watch: edit → generation 2 handled a new object in ${Math.round(performance.now() - edited)} ms`);
  const first = await client.get(configmaps, "default", "first");
  expect(first.metadata?.labels).toEqual({ greeting: "v1" });      // the object of the old generation is still there
}, 60_000);

test("an edit that does not load keeps the previous handlers running and prints where it breaks", async () => {
  const from = (out + err).length;
  writeFileSync(join(dir, "handlers", "hello.ts"), handler("v3", "on.create(\n"));
  await printed(/the edit does not load; the previous handlers keep running:[\s\S]*Unexpected end of file[\s\S]*hello\.ts:\d+/, from);
  expect((await greetingOf("third", "v2"))?.metadata?.labels).toEqual({ greeting: "v2" });
  expect((out + err).slice(from)).not.toMatch(/generation 3/);
}, 60_000);

test("a type error is printed by tsc, naming the file and line", async () => {
  const from = (out + err).length;
  writeFileSync(join(dir, "handlers", "hello.ts"), handler("v4", 'export const size: number = "big";\n'));
  // tsc checks kobun's own sources too: 3–10 s alone, several times that on a loaded 2-core machine.
  await printed(/typecheck failed[\s\S]*hello\.ts\(3,14\): error TS2322/, from, 90_000);
}, 100_000);
