// Seed 003: die properly, fast and with nothing left behind. The operator runs from source as
// a subprocess (as `kobun run` does) or in-process through `run()`, against the sandbox, with
// many idle watches; each test is one behaviour of shutdown.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { eventually, repo, startOperator } from "./helpers.ts";

const NAMESPACES = Array.from({ length: 20 }, (_, i) => `life-${i}`);
let sandbox: Sandbox;
let work: string;

const until = (pred: () => boolean, timeoutMs: number, what: string) => eventually(pred, what, timeoutMs);

function config(name: string, text: string): string {
  const path = join(work, name);
  writeFileSync(path, text);
  return path;
}

async function createConfigMap(namespace: string, name: string, label: string): Promise<void> {
  const response = await fetch(`${sandbox.url}/api/v1/namespaces/${namespace}/configmaps`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ metadata: { name, labels: { lifecycle: label } }, data: {} }),
  });
  expect(response.status).toBe(201);
}

function operatorArgs(configFile: string): string[] {
  return ["run", "--kubeconfig", sandbox.kubeconfigPath, "--config", configFile, "--standalone",
    ...NAMESPACES.flatMap((ns) => ["-n", ns]), join(import.meta.dir, "handlers")];
}

beforeAll(async () => {
  sandbox = await startSandbox();
  work = mkdtempSync(join(tmpdir(), "kobun-lifecycle-"));
  for (const name of NAMESPACES) {
    await fetch(`${sandbox.url}/api/v1/namespaces`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ metadata: { name } }) });
  }
});
afterAll(() => sandbox.stop());

describe("shutdown (seed 003)", () => {
  test("SIGTERM with 20 idle watches exits 0 quickly and leaves no open watch", async () => {
    const op = startOperator(operatorArgs(config("idle.yaml", "shutdown:\n  gracePeriod: 5s\n")));
    await until(() => sandbox.stats.openWatches() >= NAMESPACES.length, 10_000, "20 open watches");
    const sent = performance.now();
    op.child.kill("SIGTERM");
    expect(await op.child.exited).toBe(0);
    const ms = performance.now() - sent;
    expect(ms).toBeLessThan(1000); // generous for CI; bench/lifecycle.ts measures the real figure
    await until(() => sandbox.stats.openWatches() === 0, 1000, "no open watches");
  }, 20_000);

  test("a running handler receives the abort and the process exits within the grace period", async () => {
    const op = startOperator(operatorArgs(config("polite.yaml", "shutdown:\n  gracePeriod: 4s\n")));
    await until(() => sandbox.stats.openWatches() >= NAMESPACES.length, 10_000, "open watches");
    await createConfigMap("life-1", "polite", "polite");
    await op.line(/polite handler started/);
    const sent = performance.now();
    op.child.kill("SIGTERM");
    await op.line(/polite handler saw the abort/);
    expect(await op.child.exited).toBe(0);
    expect(performance.now() - sent).toBeLessThan(4000);
    expect(op.lines.some((l) => /abandoned a task/.test(l))).toBe(false);
  }, 20_000);

  test("a handler that ignores the abort is abandoned after the grace period, named in a warning", async () => {
    const op = startOperator(operatorArgs(config("stubborn.yaml", "shutdown:\n  gracePeriod: 1s\n")));
    await until(() => sandbox.stats.openWatches() >= NAMESPACES.length, 10_000, "open watches");
    await createConfigMap("life-2", "stubborn", "stubborn");
    await op.line(/stubborn handler started/);
    const sent = performance.now();
    op.child.kill("SIGTERM");
    expect(await op.child.exited).toBe(0);
    const ms = performance.now() - sent;
    expect(ms).toBeGreaterThanOrEqual(900);
    expect(ms).toBeLessThan(4000);
    const warning = op.lines.find((l) => /abandoned a task/.test(l));
    expect(warning).toBeDefined();
    expect(warning).toContain("stubborn");
    expect(warning).toContain("life-2/stubborn");
  }, 20_000);

  test("a second signal exits at once with code 130", async () => {
    const op = startOperator(operatorArgs(config("second.yaml", "shutdown:\n  gracePeriod: 30s\n")));
    await until(() => sandbox.stats.openWatches() >= NAMESPACES.length, 10_000, "open watches");
    await createConfigMap("life-3", "stubborn", "stubborn");
    await op.line(/stubborn handler started/);
    op.child.kill("SIGTERM");
    await op.line(/stopping/);
    const sent = performance.now();
    op.child.kill("SIGINT");
    expect(await op.child.exited).toBe(130);
    expect(performance.now() - sent).toBeLessThan(1000);
  }, 20_000);
});

describe("embedding run()", () => {
  test("run() resolves with nothing left: the process exits by itself, without process.exit", async () => {
    const child = Bun.spawn([process.execPath, join(import.meta.dir, "fixtures/embedded.ts"), sandbox.kubeconfigPath], {
      cwd: repo, env: { PATH: process.env.PATH ?? "", HOME: "/nonexistent" }, stdout: "pipe", stderr: "pipe",
    });
    const exited = await Promise.race([child.exited, Bun.sleep(8000).then(() => "hung" as const)]);
    if (exited === "hung") child.kill("SIGKILL");
    const out = await new Response(child.stdout).text();
    expect(exited).toBe(0);
    expect(out).toContain("run() resolved; abandoned=0");
    await until(() => sandbox.stats.openWatches() === 0, 1000, "no open watches");
  }, 15_000);
});

describe("fatal errors", () => {
  test("an unreachable API server stops with a one-line reason and exit code 4", async () => {
    const kubeconfig = config("unreachable.yaml", [
      "apiVersion: v1", "kind: Config", "current-context: x",
      "clusters: [{name: x, cluster: {server: 'http://127.0.0.1:9'}}]",
      "users: [{name: x, user: {token: t}}]",
      "contexts: [{name: x, context: {cluster: x, user: x}}]", "",
    ].join("\n"));
    const op = startOperator(["run", "--kubeconfig", kubeconfig, "--standalone", "-A", join(import.meta.dir, "handlers")]);
    expect(await op.child.exited).toBe(4);
    expect(op.lines.some((l) => /^kobun: cannot connect to the API server/.test(l))).toBe(true);
  }, 30_000);

  test("a handled resource the server does not serve stops with exit code 5", async () => {
    const handlers = join(import.meta.dir, "missing-crd");
    const op = startOperator(["run", "--kubeconfig", sandbox.kubeconfigPath, "--standalone", "-A", handlers]);
    expect(await op.child.exited).toBe(5);
    expect(op.lines.some((l) => /nothings\.example\.com/.test(l))).toBe(true);
  }, 15_000);

  test("an invalid config stops before connecting, with exit code 3 and the key named", async () => {
    const op = startOperator(["run", "--kubeconfig", sandbox.kubeconfigPath, "--config", config("bad.yaml", "shutdown:\n  gracePeriodd: 1s\n"), "-A"]);
    expect(await op.child.exited).toBe(3);
    expect(op.lines.join("\n")).toContain("shutdown.gracePeriodd");
  }, 15_000);
});
