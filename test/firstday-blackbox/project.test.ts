// docs/project.md and the README's quick start, as a first-day author meets them: `kobun init`
// in a folder outside the checkout, then every command of the generated project's README, in
// its order. `npm install` is the one step stood in for (no registry in a unit test): the
// project's node_modules gets what npm puts there for `npm install ../kobun` (a symlink to the
// checkout) and the project's other dependencies, linked from the checkout's node_modules
// (test/e2e/project.e2e.ts does the real npm install). `npx kobun` is the package's bin, under
// Node, as npx runs it. The binary runs as the ServiceAccount the manifests make, with only
// the RBAC they grant, against a sandbox that enforces it; the manifests are applied as
// `kubectl apply` would (a create of each object).

import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { startSandbox, type Sandbox } from "kobun/sandbox";
import { asAdmin } from "../runtime/restricted.ts";
import { finish, kobun, kubeconfigFile, root, Running, untilObject, userEnv } from "./helpers.ts";

const ADMIN = "first-day-admin";
const home = mkdtempSync(join(tmpdir(), "kobun-first-day-"));
const project = join(home, "my-operator");
let sandbox: Sandbox | undefined;
afterAll(async () => {
  await sandbox?.stop();
  rmSync(home, { recursive: true, force: true });
});

/** What `npm install` leaves for the scaffold's package.json, kobun from a checkout's path. */
function linkDependencies(): void {
  const pkg = JSON.parse(readFileSync(join(project, "package.json"), "utf8"));
  const names = [...Object.keys(pkg.dependencies), ...Object.keys(pkg.devDependencies)];
  expect(names.sort()).toEqual(["@types/bun", "bun", "kobun", "typebox", "typescript"]);
  mkdirSync(join(project, "node_modules", "@types"), { recursive: true });
  mkdirSync(join(project, "node_modules", ".bin"));
  for (const name of names) symlinkSync(name === "kobun" ? root : join(root, "node_modules", name), join(project, "node_modules", name));
  // The bins npm links: kobun's launcher, and the tsc that `kobun test` typechecks with.
  for (const [bin, target] of [["kobun", "../kobun/bin/kobun.js"], ["tsc", "../typescript/bin/tsc"]]) {
    symlinkSync(target!, join(project, "node_modules", ".bin", bin!));
  }
}

/** `npx kobun ARGS` in the project: the bin npm linked, under Node. */
const npxKobun = (args: string[]) => ["node", join(project, "node_modules", ".bin", "kobun"), ...args];

/** `kubectl apply -f -` of a fresh cluster: each object created, as the admin. */
async function apply(yaml: string, into: Sandbox): Promise<string[]> {
  const applied: string[] = [];
  for (const doc of parseAllDocuments(yaml)) {
    expect(doc.errors).toEqual([]);
    const object = doc.toJS();
    const { apiVersion, kind, metadata } = object;
    const base = apiVersion === "v1" ? "/api/v1" : `/apis/${apiVersion}`;
    const scope = metadata.namespace ? `/namespaces/${metadata.namespace}` : "";
    await asAdmin(into, ADMIN, "POST", `${base}${scope}/${kind.toLowerCase()}s`, object);
    applied.push(`${kind}/${metadata.name}`);
  }
  return applied;
}

/** The service account's token, in the kubeconfig the README's run line names. */
async function serviceAccountKubeconfig(into: Sandbox, namespace: string, name: string): Promise<void> {
  const request = await asAdmin(into, ADMIN, "POST", `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, {
    apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 3600 },
  });
  kubeconfigFile(project, "my-cluster.kubeconfig", into.url, request.status.token);
}

test("kobun init outside the checkout; the project's README commands, in order: test, dev --demo, build, manifests, the binary", async () => {
  const init = await kobun(["init", project], { cwd: home });
  expect({ code: init.code, err: init.stderr }).toEqual({ code: 0, err: "" });
  expect(init.stdout).toContain("Next:\n  cd my-operator\n  npm install\n  npx kobun test\n  npx kobun dev");

  const readme = readFileSync(join(project, "README.md"), "utf8");
  const commands = /```sh\n([\s\S]*?)```/.exec(readme)![1]!.split("\n").map((line) => line.replace(/\s+#.*$/, "").trim()).filter(Boolean);
  expect(commands).toEqual([
    "npm install",
    "npx kobun test",
    "npx kobun dev",
    "npx kobun dev --demo",
    "npx kobun build",
    "./dist/kobun run --kubeconfig ./my-cluster.kubeconfig -n default",
    "npx kobun manifests --image registry.example/my-operator:0.1.0 | kubectl apply -f -",
  ]);
  linkDependencies();
  const env = userEnv();

  const tested = await finish(npxKobun(["test"]), { cwd: project, env, ms: 40_000 });
  expect({ code: tested.code, out: tested.code === 0 ? "" : tested.stdout + tested.stderr }).toEqual({ code: 0, out: "" });
  expect(tested.stdout + tested.stderr).toContain("(pass) create_fn greets a new Hello");

  // `npx kobun dev` (--demo: the sample walked through), stopped by a SIGTERM to the launcher alone, passed on.
  const dev = new Running(npxKobun(["dev", "--demo"]), { cwd: project, env });
  try {
    await dev.until(/demo: deleted Hello\/hello-demo: gone\n/, 30_000);   // a create handler holds no finalizer
    expect(dev.output).toMatch(/demo: created Hello\/hello-demo: status=\{"create_fn":\{"message":"hello, hello-demo"\}/);
    dev.child.kill("SIGTERM");
    expect(await dev.exited()).toBe(0);
  } finally {
    dev.kill();
  }

  const built = await finish(npxKobun(["build"]), { cwd: project, env, ms: 60_000 });
  expect({ code: built.code, err: built.code === 0 ? "" : built.stderr }).toEqual({ code: 0, err: "" });
  expect(built.stdout).toMatch(/built dist\/kobun: [\d.]+ MiB, 1 handler module\(s\)/);
  expect(existsSync(join(project, "dist", "kobun"))).toBe(true);
  // What the binary is not (docs/project.md): no init, build, test or docs, no sandbox; exit 2, saying so.
  const refused = await Promise.all([["init", "x"], ["build"], ["test"], ["docs"], ["dev"], ["version", "--json"]]
    .map((args) => finish(["./dist/kobun", ...args], { cwd: project, env })));
  expect(refused.map((r) => r.code)).toEqual([2, 2, 2, 2, 2, 2]);
  expect(refused[3]!.stderr).toContain("kobun docs runs from the kobun package (npx kobun docs), not from a compiled operator");
  expect(refused[4]!.stderr).toContain("built without the sandbox");

  // The manifests before the binary: the binary needs the CRD they carry (the README's comment says so).
  const manifests = await finish(npxKobun(["manifests", "--image", "registry.example/my-operator:0.1.0"]), { cwd: project, env });
  expect({ code: manifests.code, err: manifests.stderr }).toEqual({ code: 0, err: "" });
  sandbox = await startSandbox({ token: ADMIN });
  expect(await apply(manifests.stdout, sandbox)).toEqual([
    "CustomResourceDefinition/hellos.example.com", "ServiceAccount/my-operator", "Role/my-operator",
    "RoleBinding/my-operator", "Deployment/my-operator",
  ]);
  expect(manifests.stdout).toContain("image: registry.example/my-operator:0.1.0");
  await serviceAccountKubeconfig(sandbox, "default", "my-operator");

  const operator = new Running(["./dist/kobun", "run", "--kubeconfig", "./my-cluster.kubeconfig", "-n", "default"], { cwd: project, env });
  try {
    await operator.until(/operator ready/);
    await asAdmin(sandbox, ADMIN, "POST", "/apis/example.com/v1/namespaces/default/hellos", {
      apiVersion: "example.com/v1", kind: "Hello", metadata: { name: "world" }, spec: { greeting: "hello" },
    });
    const hello = await untilObject(sandbox.url, ADMIN, "/apis/example.com/v1/namespaces/default/hellos/world", (o) => o.status?.create_fn);
    expect(hello.status.create_fn).toEqual({ message: "hello, world" });
    await operator.until(/Handler 'create_fn' succeeded\./);
    operator.child.kill("SIGTERM");
    expect(await operator.exited()).toBe(0);
    // The RBAC of the manifests covers everything it did: no write or Event was refused.
    expect(operator.output.split("\n").filter((line) => / (WARN|ERROR) /.test(line))).toEqual([]);
  } finally {
    operator.kill();
  }
}, 120_000);
