// Which kubeconfig the default lookup picks (`defaultKubeconfigs`, what `connect({ useDefaults })`
// reads): KUBECONFIG's first entry that exists, then $HOME/.kube/config. The environment is
// passed in explicitly, naming temp paths only (the process's own KUBECONFIG and HOME are never
// read here), and every connection is made with an explicit kubeconfig for the sandbox.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { connect, KubeconfigError } from "../../src/kube/index.ts";
import { defaultKubeconfigs, fromKubeconfig } from "../../src/kube/connection.ts";
import { resolveMergedKubeconfig } from "../../src/kube/kubeconfig-merge.ts";

/** The file whose settings win where the merged files disagree: the first of defaultKubeconfigs. */
const defaultKubeconfig = async (env: { KUBECONFIG?: string; HOME?: string }) => (await defaultKubeconfigs(env))[0];

let sandbox: Sandbox;
let dir: string;
let emptyHome: string;

beforeAll(async () => {
  sandbox = await startSandbox();
  dir = mkdtempSync(join(tmpdir(), "kobun-default-kubeconfig-"));
  emptyHome = join(dir, "empty-home");
  mkdirSync(emptyHome);
});
afterAll(async () => {
  await sandbox.stop();
  rmSync(dir, { recursive: true, force: true });
});

test("KUBECONFIG's first existing entry is picked, missing ones are skipped", async () => {
  const picked = await defaultKubeconfig({ KUBECONFIG: [join(dir, "missing.yaml"), sandbox.kubeconfigPath].join(":"), HOME: emptyHome });
  expect(picked).toBe(sandbox.kubeconfigPath);
  expect((await connect({ kubeconfig: picked! })).server).toBe(sandbox.url);
});

test("a KUBECONFIG entry that is a directory is picked, and reading it is an error naming it (not a move to the next file)", async () => {
  const directory = join(dir, "a-directory");
  mkdirSync(directory, { recursive: true });
  const picked = await defaultKubeconfig({ KUBECONFIG: [directory, sandbox.kubeconfigPath].join(":"), HOME: emptyHome });
  expect(picked).toBe(directory);
  const failed = await connect({ kubeconfig: picked! }).then(() => undefined, (error) => error);
  expect(failed).toBeInstanceOf(KubeconfigError);
  expect((failed as Error).message).toContain(`cannot read kubeconfig ${directory}`);
});

test("without KUBECONFIG, $HOME/.kube/config is picked (a trailing slash on HOME too); without either, nothing", async () => {
  const home = join(dir, "home");
  mkdirSync(join(home, ".kube"), { recursive: true });
  writeFileSync(join(home, ".kube", "config"), sandbox.kubeconfig);
  expect(await defaultKubeconfig({ HOME: `${home}/` })).toBe(join(home, ".kube", "config"));
  expect(await defaultKubeconfig({ HOME: emptyHome })).toBeUndefined();
});

test("several KUBECONFIG files are merged as kubectl merges them: the first to name an entry or current-context wins", async () => {
  const doc = Bun.YAML.parse(sandbox.kubeconfig) as any;
  const first = join(dir, "merge-first.yaml");
  const second = join(dir, "merge-second.yaml");
  // The first file: the user and current-context only; the second: everything, with a bad token for that user.
  const withToken = (token: string) => doc.users.map((u: any) => ({ ...u, user: { token } }));
  writeFileSync(first, JSON.stringify({ apiVersion: "v1", kind: "Config", "current-context": doc["current-context"], users: withToken("first") }));
  const stale = withToken("stale");
  writeFileSync(second, JSON.stringify({ ...doc, "current-context": "nothing", users: stale }));
  const files = await defaultKubeconfigs({ KUBECONFIG: [first, join(dir, "missing.yaml"), second, first].join(":"), HOME: emptyHome });
  expect(files).toEqual([first, second]);
  const connection = await fromKubeconfig(await resolveMergedKubeconfig(files));
  expect(connection.server).toBe(sandbox.url);
  expect(await connection.authHeaders()).toEqual({ Authorization: "Bearer first" });
});
