// The default lookup (`useDefaults`: no --kubeconfig): KUBECONFIG's entries in order, then
// $HOME/.kube/config, then the pod's service account. Each test points KUBECONFIG and HOME at
// temp paths of its own (and unsets KUBERNETES_SERVICE_HOST), and puts them back after: the
// machine's own kubeconfig is never read.

import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.ts";
import { connect, KubeconfigError } from "../../src/kube/index.ts";

const SAVED = ["KUBECONFIG", "HOME", "KUBERNETES_SERVICE_HOST"] as const;
let saved: Record<string, string | undefined>;
let sandbox: Sandbox;
let dir: string;

beforeAll(async () => {
  sandbox = await startSandbox();
  dir = mkdtempSync(join(tmpdir(), "kobun-default-kubeconfig-"));
});
afterAll(async () => {
  await sandbox.stop();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  saved = Object.fromEntries(SAVED.map((k) => [k, process.env[k]]));
  process.env.HOME = join(dir, "empty-home");
  delete process.env.KUBECONFIG;
  delete process.env.KUBERNETES_SERVICE_HOST;
});
afterEach(() => {
  for (const k of SAVED) if (saved[k] === undefined) delete process.env[k]; else process.env[k] = saved[k];
});

test("KUBECONFIG's first existing entry is used, missing ones are skipped", async () => {
  process.env.KUBECONFIG = [join(dir, "missing.yaml"), sandbox.kubeconfigPath].join(":");
  const connection = await connect({ useDefaults: true });
  expect(connection.server).toBe(sandbox.url);
});

test("a KUBECONFIG entry that is a directory is an error naming it, not skipped for the next file", async () => {
  const directory = join(dir, "a-directory");
  mkdirSync(directory, { recursive: true });
  process.env.KUBECONFIG = [directory, sandbox.kubeconfigPath].join(":");
  const failed = await connect({ useDefaults: true }).then(() => undefined, (error) => error);
  expect(failed).toBeInstanceOf(KubeconfigError);
  expect((failed as Error).message).toContain(`cannot read kubeconfig ${directory}`);
});

test("without KUBECONFIG, $HOME/.kube/config is used; without either, the error says what was looked for", async () => {
  const home = join(dir, "home");
  mkdirSync(join(home, ".kube"), { recursive: true });
  writeFileSync(join(home, ".kube", "config"), sandbox.kubeconfig);
  process.env.HOME = `${home}/`;
  expect((await connect({ useDefaults: true })).server).toBe(sandbox.url);
  process.env.HOME = join(dir, "empty-home");
  await expect(connect({ useDefaults: true })).rejects.toThrow(/no Kubernetes credentials found/);
});
