// A legacy auth-provider user (oidc, gcp, azure) needs client-node's KubeConfig, which kobun imports
// only for it, through a specifier the bundler cannot see. From source it loads; a compiled operator
// cannot load it even from a directory whose node_modules holds it (Bun 1.4.5 does not resolve the
// packages client-node imports from a compiled binary). What it says must be true: not "carry it".

import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build, KOBUN_ROOT } from "../../../src/cli/project/build.ts";
import { startSandbox } from "../../../src/sandbox.ts";

const work = mkdtempSync(join(tmpdir(), "kobun-auth-provider-binary-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

test("a compiled operator refuses an auth-provider user with exit 4, saying it cannot load the provider", async () => {
  await using stack = new AsyncDisposableStack();
  const sandbox = await startSandbox();
  stack.defer(() => sandbox.stop());
  const handlers = join(work, "handlers");
  mkdirSync(handlers);
  writeFileSync(join(handlers, "cm.ts"), `import { on } from ${JSON.stringify(join(KOBUN_ROOT, "src/index.ts"))};
on.event("v1/configmaps", () => undefined, { id: "seen" });`);
  const { outfile } = await build({ handlers, outfile: join(work, "op"), cwd: KOBUN_ROOT });
  const kubeconfig = join(work, "oidc.kubeconfig");
  writeFileSync(kubeconfig, `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "${sandbox.url}"}}]
users: [{name: oidc-user, user: {auth-provider: {name: oidc, config: {client-id: kobun, id-token: x.y.z}}}}]
contexts: [{name: ctx, context: {cluster: c, user: oidc-user}}]
current-context: ctx
`);
  // Started in the checkout, whose node_modules holds @kubernetes/client-node and all it imports.
  const proc = Bun.spawn([outfile, "run", "--kubeconfig", kubeconfig, "-n", "default", "--standalone"], {
    cwd: KOBUN_ROOT, stdout: "pipe", stderr: "pipe",
  });
  const [err, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  expect(code).toBe(4);
  expect(err).toContain('auth provider "oidc" of user "oidc-user" needs @kubernetes/client-node, which a compiled operator cannot load');
}, 60_000);
