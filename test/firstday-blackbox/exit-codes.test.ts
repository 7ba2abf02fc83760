// The README's exit-code table ("Exit codes", and production.md's), each code provoked as a user
// would meet it: `kobun run` from source against a sandbox API server on 127.0.0.1 (or a closed
// port), with an explicit kubeconfig and a handler module of the user's. 2, 3 and 4 for an
// unreachable server are held by docs-blackbox/configuration.test.ts; here the others.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { startSandbox, type Sandbox } from "kobun/sandbox";
import { asAdmin, restrictedKubeconfig } from "../runtime/restricted.ts";
import { cli, createConfigMap, handlerModule, kobun, kubeconfigFile, Running, scratchDir } from "./helpers.ts";

const ADMIN = "first-day-admin";
let open: Sandbox;   // anyone on 127.0.0.1 is an admin
let guarded: Sandbox; // a bearer token, and RBAC for service accounts
let dir: string;
beforeAll(async () => {
  [open, guarded] = await Promise.all([startSandbox(), startSandbox({ token: ADMIN })]);
  dir = scratchDir();
});
afterAll(async () => {
  await Promise.all([open?.stop(), guarded?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

const runFlags = (kubeconfig: string) => ["--kubeconfig", kubeconfig, "-n", "default", "--standalone"];

test("1: a handler module that throws while loading; 5: a handled resource not served, or the probe address taken; 6: on.login / on.startup", async () => {
  const onConfigMaps = 'import { on } from "kobun";\non.create("v1/configmaps", () => {}, { id: "noop" });\n';
  const modules = {
    throws: handlerModule(dir, "throws.ts", 'import "kobun";\nthrow new Error("the database URL is not set");\n'),
    noCrd: handlerModule(dir, "no-crd.ts", 'import { on } from "kobun";\non.create("widgets.first-day.example/v1", () => {});\n'),
    configMaps: handlerModule(dir, "configmaps.ts", onConfigMaps),
    loginThrows: handlerModule(dir, "login-throws.ts", `${onConfigMaps}on.login(() => { throw new Error("vault is sealed"); });\n`),
    loginNothing: handlerModule(dir, "login-nothing.ts", `${onConfigMaps}on.login(() => null as never);\n`),
    startup: handlerModule(dir, "startup.ts",
      `import { PermanentError } from "kobun";\n${onConfigMaps}on.startup(() => { throw new PermanentError("no schema"); }, { id: "migrate" });\n`),
  };
  const taken = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  try {
    const flags = runFlags(open.kubeconfigPath);
    const [throws, noCrd, probeTaken, loginThrows, loginNothing, startup] = await Promise.all([
      kobun(["run", modules.throws, ...flags]),
      kobun(["run", modules.noCrd, ...flags]),
      kobun(["run", modules.configMaps, ...flags, "--liveness", `http://127.0.0.1:${taken.port}/healthz`]),
      kobun(["run", modules.loginThrows, ...flags]),
      kobun(["run", modules.loginNothing, ...flags]),
      kobun(["run", modules.startup, ...flags]),
    ]);
    expect({ code: throws.code, line: throws.stderr.split("\n")[0] }).toEqual({ code: 1, line: "kobun: crashed: Error: the database URL is not set" });
    expect(throws.stderr).toContain("throws.ts:2");
    expect(noCrd.code).toBe(5);
    expect(noCrd.stderr).toMatch(/widgets\.first-day\.example\/v1"? is not served by the API server \(is its CRD installed\?\)/);
    expect(probeTaken.code).toBe(5);
    expect(probeTaken.stderr).toContain(`cannot serve probes at http://127.0.0.1:${taken.port}/healthz`);
    expect(loginThrows.code).toBe(6);
    expect(loginThrows.stderr).toContain("vault is sealed");
    expect(loginNothing.code).toBe(6);
    expect(loginNothing.stderr).toContain("no login handler returned credentials");
    expect(startup.code).toBe(6);
    expect(startup.stderr).toContain("startup handler migrate failed: no schema");
    // "no watch was opened": the startup failure comes before the operator starts.
    expect(startup.stderr).not.toContain("operator started");
  } finally {
    taken.stop(true);
  }
}, 30_000);

test("4: a token the API server refuses; 5: a service account without RBAC, naming resource, namespace and verb", async () => {
  const module = handlerModule(dir, "guarded.ts", 'import { on } from "kobun";\non.create("v1/configmaps", () => {}, { id: "noop" });\n');
  const wrongToken = kubeconfigFile(dir, "wrong-token.kubeconfig", guarded.url, "not-the-token");
  const unbound = await restrictedKubeconfig(guarded, ADMIN, "first-day-op", {});
  const [refused, forbidden] = await Promise.all([
    kobun(["run", module, ...runFlags(wrongToken)]),
    kobun(["run", module, ...runFlags(unbound)]),
  ]);
  expect(refused.code).toBe(4);
  expect(refused.stderr).toContain("kobun: cannot authenticate to the API server");
  expect(refused.stderr).not.toContain("not-the-token"); // never log tokens
  expect(forbidden.code).toBe(5);
  expect(forbidden.stderr).toContain('permissions lacking at start-up: forbidden: cannot watch configmaps in namespace "default"');
  expect(forbidden.stderr).toContain('grant the "watch" verb on "configmaps"');
  expect(forbidden.stderr).not.toContain("operator ready"); // it never was
}, 30_000);

test("4 and 5 are start-up's: token revoked, CRD deleted while running: /healthz 503 naming the watch; restart exits",
  async () => {
  const crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
  const names = { plural: "gadgets", singular: "gadget", kind: "Gadget" };
  const crd = { apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition",
    metadata: { name: "gadgets.first-day.example" }, spec: { group: "first-day.example", scope: "Namespaced", names,
      versions: [{ name: "v1", served: true, storage: true,
        schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } } }] } };
  await asAdmin(open, "", "POST", crds, crd);
  const modules = {
    configMaps: handlerModule(dir, "revoked.ts", 'import { on } from "kobun";\non.create("v1/configmaps", () => {});\n'),
    gadgets: handlerModule(dir, "gadgets.ts",
      'import { on } from "kobun";\non.create("gadgets.first-day.example/v1", () => {});\n'),
  };
  const read = { apiGroups: [""], resources: ["configmaps"], verbs: ["list", "watch", "patch"] };
  const revoked = await restrictedKubeconfig(guarded, ADMIN, "first-day-revoked",
    { roles: { "first-day-revoked": [read] } });
  const probes = ["--liveness", "http://127.0.0.1:0/healthz"];
  const flags = (kubeconfig: string, ns: string) => ["--kubeconfig", kubeconfig, "-n", ns, "--standalone", ...probes];
  const ops = [new Running([process.execPath, cli, "run", modules.configMaps, ...flags(revoked, "first-day-revoked")]),
    new Running([process.execPath, cli, "run", modules.gadgets, ...flags(open.kubeconfigPath, "default")])];
  try {
    const bases = await Promise.all(ops.map(async (op) => (await op.until(/serving probes url=(\S+)\/healthz/))[1]!));
    await Promise.all(ops.map((op) => op.until(/operator ready/)));
    // Its tokens die with it; the dropped watches reconnect, as after a server's watch timeout.
    await asAdmin(guarded, ADMIN, "DELETE", "/api/v1/namespaces/first-day-revoked/serviceaccounts/op");
    guarded.faults.dropWatches();
    await asAdmin(open, "", "DELETE", `${crds}/gadgets.first-day.example`);
    await Promise.all([ops[0]!.until(/watching failed; restarting .*401 Unauthorized/),
      ops[1]!.until(/watching failed; restarting .*404 NotFound/)]);
    const health = await Promise.all(bases.map(async (base) => ((r) => r.json().then((body) => [r.status, body]))(
      await fetch(`${base}/healthz`))));
    const problem = (watch: string, code: string) => [503, { problems: { [watch]: expect.stringContaining(code) } }];
    expect(health).toMatchObject([problem("watch configmaps in first-day-revoked", "401"),
      problem("watch gadgets.first-day.example in default", "404")]);
    expect(ops.map((op) => op.child.exitCode)).toEqual([null, null]);   // still running: not an exit
    ops.forEach((op) => op.child.kill("SIGTERM"));
    expect(await Promise.all(ops.map((op) => op.exited()))).toEqual([0, 0]);
    const again = await Promise.all([kobun(["run", modules.configMaps, ...runFlags(revoked)]),
      kobun(["run", modules.gadgets, ...runFlags(open.kubeconfigPath)])]);
    expect(again.map((r) => r.code)).toEqual([4, 5]);
  } finally {
    ops.forEach((op) => op.kill());
  }
}, 45_000);

test("0: SIGTERM stops cleanly (handlers done, on.cleanup after them, every line written); 130: a second signal while a handler holds the stop", async () => {
  const clean = handlerModule(dir, "clean.ts", [
    'import { on } from "kobun";',
    'on.create("v1/configmaps", ({ name, logger }) => logger.info(`handled ${name}`), { id: "greet", labels: { day: "first" } });',
    'on.cleanup(({ logger }) => logger.info("cleanup ran"));',
  ].join("\n"));
  const stubborn = handlerModule(dir, "stubborn.ts", [
    'import { on } from "kobun";',
    '// Ignores its signal: only the grace period (30 s here) or a second signal ends it.',
    'on.create("v1/configmaps", ({ logger }) => { logger.info("holding on"); return new Promise(() => {}); }, { id: "hold", labels: { day: "second" } });',
  ].join("\n"));
  const config = handlerModule(dir, "slow-stop.yaml", "shutdown: { gracePeriod: 30s }\n");
  const first = new Running([process.execPath, cli, "run", clean, ...runFlags(open.kubeconfigPath)]);
  const second = new Running([process.execPath, cli, "run", stubborn, ...runFlags(open.kubeconfigPath), "--config", config]);
  try {
    // Bounds for CI's first minute, when two operators from source start beside the suites and two control planes
    // (a run met "operator started" and nothing more within 15 s there).
    await Promise.all([first.until(/operator ready/, 30_000), second.until(/operator ready/, 30_000)]);
    await Promise.all([createConfigMap(open, "first-day", { day: "first" }), createConfigMap(open, "second-day", { day: "second" })]);
    await Promise.all([first.until(/Handler 'greet' succeeded/, 30_000), second.until(/holding on/, 30_000)]);

    first.child.kill("SIGTERM");
    expect(await first.exited()).toBe(0);
    const lines = first.output.trimEnd().split("\n");
    const at = (text: string) => lines.findIndex((line) => line.includes(text));
    expect(at("handled first-day")).toBeGreaterThanOrEqual(0);
    expect(at("stopping")).toBeGreaterThan(at("handled first-day"));
    expect(at("cleanup ran")).toBeGreaterThan(at("stopped"));
    expect(lines.at(-1)).toContain("Activity 'cleanup#1' succeeded.");

    second.child.kill("SIGTERM");
    await second.until(/stopping gracePeriod=30/);
    second.child.kill("SIGTERM");
    // Long before the 30 s grace period: exited at once.
    expect(await second.exited(15_000)).toBe(130);
    expect(second.output).not.toContain("stopped");
  } finally {
    first.kill();
    second.kill();
  }
}, 90_000);

test("0 within the grace period: SIGTERM while an on.startup ignores its signal (waits on a database)", async () => {
  const stuck = handlerModule(dir, "stuck-startup.ts", [
    'import { on } from "kobun";',
    'on.startup(({ logger }) => { logger.info("waiting for the database"); return new Promise(() => {}); },',
    '  { id: "db" });',
    'on.create("v1/configmaps", () => {}, { id: "noop" });',
  ].join("\n"));
  const config = handlerModule(dir, "short-stop.yaml", "shutdown: { gracePeriod: 1s }\n");
  const operator = new Running([process.execPath, cli, "run", stuck, ...runFlags(open.kubeconfigPath),
    "--config", config]);
  try {
    await operator.until(/waiting for the database/);
    operator.child.kill("SIGTERM");
    // The 1 s grace, not kubelet's SIGKILL 30 s later: the handler is abandoned and named.
    expect(await operator.exited(10_000)).toBe(0);
    expect(operator.output).toMatch(/abandoned a task that ignored the stop signal .* task="startup db"/);
  } finally {
    operator.kill();
  }
}, 30_000);

test("2: what a first-day user mistypes: a stray argument to version or docs, a misspelt dev flag, a handler path that is not there", async () => {
  const [version, docs, dev, path, none, noneDev] = await Promise.all([
    kobun(["version", "--json"]), kobun(["docs", "handlers"]), kobun(["dev", "--demoo"]),
    kobun(["run", "handler.ts", "--kubeconfig", open.kubeconfigPath, "-n", "default"], { cwd: dir }),
    // Run from a directory with no ./handlers and none named: nothing would be watched, so nothing runs.
    kobun(["run", "--kubeconfig", open.kubeconfigPath, "-n", "default"], { cwd: dir }), kobun(["dev"], { cwd: dir }),
  ]);
  expect([version.code, docs.code, dev.code, path.code, none.code, noneDev.code]).toEqual([2, 2, 2, 2, 2, 2]);
  for (const { stderr } of [none, noneDev]) {
    expect(stderr).toContain(`kobun: no handlers to load: name their files or directories (kobun run handlers/), or run it where ./handlers is (there is none in ${dir})`);
  }
  expect(version.stderr).toContain("kobun version takes no arguments: unknown flag --json");
  expect(docs.stderr).toContain('kobun docs takes no arguments: unexpected argument "handlers"');
  expect(dev.stderr).toContain("unknown flag --demoo; did you mean --demo?");
  expect(path.stderr).toBe('kobun: handler path handler.ts does not exist (files or directories of handlers)\nRun "kobun --help" for usage.\n');
}, 30_000);
