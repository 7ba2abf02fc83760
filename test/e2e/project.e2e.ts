// What a new user does: `npm pack` kobun, `npm init -y` and `npm install` the tarball (no warning
// printed, on Node 20 too: kobun's dependencies allow it, and Bun comes as a platform package with
// no install script), `npx kobun init .` (merged into npm init's package.json), add a field to the schema and a handler using it, `tsc`, `npx kobun dev`, `npx kobun test` (the
// project's own test, with kobun/testing against an in-process sandbox), `npx kobun build`, and
// the binary against the real API server, where the new handler's result appears on the object.
// Also: the package carries docs/ (the README's links resolve in node_modules/kobun), and
// `npx kobun test` fails on a type error, with tsc's message, before running any test.
//
//   cd test/e2e && KOBUN_E2E_TARGET=cluster bun test ./project.e2e.ts
//
// Cluster target only: the sandbox part is `npx kobun test` itself (the kit starts its own), and
// running the binary against the e2e sandbox too would repeat the same npm steps (~most of the
// time here) to show again what scenarios.e2e.ts shows for every binary.
// npm runs with --prefer-offline (the cache is warm; the registry is reachable for a miss).
// It creates the CRD hellos.example.com (kept, as the suite's other CRDs) and a namespace e2e-project-*.

import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { Resource } from "../../src/kube/types.ts";
import { awaitObject } from "../../src/testing/until.ts";
import { silentLogger } from "../../src/util/log.ts";
import { createNamespace, installCrds } from "./harness/kube.ts";
import { ROOT, startOperator } from "./harness/operator.ts";
import { targetSuite } from "./harness/suite.ts";
import { selectedTargets, type TargetName } from "./harness/target.ts";

const VERSION: string = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version;
const HELLOS: Resource = { group: "example.com", version: "v1", plural: "hellos", kind: "Hello", namespaced: true, statusSubresource: true };

/** A command to completion in `cwd`, bounded; its output is in the error when it fails (unless `mayFail`). */
async function sh(
  cwd: string, argv: string[], timeoutMs = 120_000, mayFail = false,
): Promise<{ out: string; ms: number; code: number }> {
  const env: Record<string, string> = { ...(process.env as Record<string, string>), npm_config_update_notifier: "false", npm_config_fund: "false", npm_config_audit: "false", NO_COLOR: "1" };
  delete env.KUBECONFIG; // nothing here may find a cluster by itself
  const t0 = performance.now();
  const proc = Bun.spawn(argv, { cwd, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const killer = setTimeout(() => proc.kill("SIGKILL"), timeoutMs);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(killer);
  const out = stdout + stderr;
  if (code !== 0 && !mayFail) throw new Error(`${argv.join(" ")} (in ${cwd}) exited ${code}:\n${out.slice(-4000)}`);
  return { out, ms: performance.now() - t0, code };
}

/** The packages kobun's tarball bundles: the sandbox's (bundleDependencies) and, by the lock, what it depends on. */
function bundledPackages(): Set<string> {
  const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")).packages;
  const names = new Set<string>(["@kobun/sandbox"]);
  const visit = (dependencies: Record<string, string> = {}) => {
    for (const name of Object.keys(dependencies)) {
      if (names.has(name)) continue;
      names.add(name);
      visit(lock[`node_modules/${name}`]?.dependencies);
    }
  };
  visit(lock["packages/sandbox"].dependencies);
  return names;
}

/** What a project needs (bin, src, the sandbox's package, the scaffold, the example config), and no tests, benchmarks or example handlers. */
function expectPackaged(files: string[]): void {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  const needed = ["bin/kobun.js", "src/cli.ts", "node_modules/@kobun/sandbox/src/index.ts", "node_modules/@kobun/sandbox/src/kube-openapi.json.gz"];
  for (const file of [...needed, "scaffold/handlers/hello.ts", "scaffold/gitignore", "kobun.example.yaml"]) expect(files).toContain(file);
  // The guides, so that the README's links resolve in node_modules/kobun (project.e2e follows them there).
  for (const file of ["docs/README.md", "docs/testing.md", "docs/project.md"]) expect(files).toContain(file);
  for (const target of Object.values(pkg.exports as Record<string, string>)) expect(files).toContain(target.replace(/^\.\//, ""));
  // The one file under test/: the Dockerfile's rootfs script, a build step, not a test.
  expect(files.filter((f) => f.startsWith("test/"))).toEqual(["test/scratch/rootfs.sh"]);
  expect(files.filter((f) => /^(bench|handlers|dist|packages|\.ci)\//.test(f) || (/\.test\.ts$/.test(f) && !f.startsWith("scaffold/")))).toEqual([]);
  // Under node_modules/: the bundled sandbox and its dependencies, nothing else.
  const bundled = bundledPackages();
  const packageOf = (file: string) => file.split("/").slice(1, file.split("/")[1]!.startsWith("@") ? 3 : 2).join("/");
  expect(files.filter((f) => f.startsWith("node_modules/") && !bundled.has(packageOf(f)))).toEqual([]);
}

/** Every relative link of the installed README and guides names a file the installed package holds. */
function expectLinksResolve(kobun: string): void {
  const pages = ["README.md", ...readdirSync(join(kobun, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];
  const dead = pages.flatMap((page) =>
    [...readFileSync(join(kobun, page), "utf8").matchAll(/\]\(([^)\s#]+)(?:#[^)]*)?\)/g)]
      .map((m) => m[1]!).filter((target) => !/^[a-z]+:/.test(target))
      .map((target) => join(dirname(join(kobun, page)), target)).filter((path) => !existsSync(path)));
  expect(pages.length).toBeGreaterThan(10);
  expect(dead).toEqual([]);
}

/** npm's warnings (EBADENGINE, install scripts not in allowScripts, ...): a clean install prints none. */
const npmWarnings = (out: string) => out.split("\n").filter((line) => /^npm warn/i.test(line));

/**
 * npm's warnings on `npm install kobun` into a project that has no allowScripts yet: none but npm 11's
 * notice that `bun`'s install script is not covered (kobun depends on the `bun` package, and needs not
 * its script: the README says so, and `kobun init` then writes allowScripts). Any other package named
 * there, or any other warning, is kept.
 */
function firstInstallWarnings(out: string): string[] {
  const warnings = npmWarnings(out);
  const scripts = warnings.filter((line) => /^npm warn install-scripts/i.test(line));
  const packages = scripts.flatMap((line) => /^npm warn install-scripts\s+(\S+)@\S+ \(/i.exec(line)?.[1] ?? []);
  const onlyBun = packages.length === 1 && packages[0] === "bun";
  return onlyBun ? warnings.filter((line) => !scripts.includes(line)) : warnings;
}

/** The user's edit: a `times` field in the spec, and a handler that uses it. */
function addEchoes(project: string): void {
  const handler = join(project, "handlers/hello.ts");
  const source = readFileSync(handler, "utf8")
    .replace("greeting: Type.String({ minLength: 1 }),", "greeting: Type.String({ minLength: 1 }),\n      times: Type.Integer({ minimum: 1 }),")
    .replace("create_fn: Type.Optional(", "echo_fn: Type.Optional(Type.Object({ echoes: Type.Array(Type.String()) })),\n      create_fn: Type.Optional(");
  expect(source).toContain("times: Type.Integer");
  expect(source).toContain("echo_fn:");
  // The scaffold's sample needs the new required field too (kobun dev --once creates it).
  const sample = join(project, "handlers/hello.sample.yaml");
  writeFileSync(sample, readFileSync(sample, "utf8").replace("greeting: hello", "greeting: hello\n  times: 1"));
  writeFileSync(handler, `${source}
on.create(Hellos, ({ spec }) => ({ echoes: Array.from({ length: spec.times }, () => spec.greeting) }), { id: "echo_fn" });
`);
  const testFile = join(project, "test/hello.test.ts");
  const tests = readFileSync(testFile, "utf8").replace('spec: { greeting: "hello" }', 'spec: { greeting: "hello", times: 1 }');
  expect(tests).toContain("times: 1");
  writeFileSync(testFile, `${tests}
test("echo_fn repeats the greeting spec.times times", async () => {
  await using kit = await startOperator();
  await kit.apply(Hellos, { metadata: { name: "twice" }, spec: { greeting: "hi", times: 2 } });
  const hello = await kit.until(Hellos, "twice", (o) => o.status?.echo_fn);
  expect(hello.status?.echo_fn?.echoes).toEqual(["hi", "hi"]);
});
`);
}

/**
 * A schedule-driven handler of the user's, tested on the kit's virtual clock (issue 35): an hourly
 * timer runs 3 times in `advance(3 * 3600)`, which the test prints as it measures it, under a second.
 */
function addScheduleTest(project: string): void {
  writeFileSync(join(project, "test/schedule.test.ts"), `import { expect, test } from "bun:test";
import { now, Registry } from "kobun";
import { startOperator } from "kobun/testing";
import { Hellos } from "../handlers/hello.ts";

test("an hourly timer runs 3 times in 3 hours of virtual time", async () => {
  const registry = new Registry();
  const ticks: number[] = [];
  registry.on.timer(Hellos, () => void ticks.push(now().getTime()), { id: "hourly", interval: 3600 });
  await using kit = await startOperator({ registry, clock: "virtual", logLevel: "silent" });
  await kit.apply(Hellos, { metadata: { name: "ticking" }, spec: { greeting: "hi", times: 1 } });
  await kit.until(Hellos, "ticking", (o) => o.metadata.finalizers?.length);
  const started = performance.now();
  await kit.advance(3 * 3600);
  const ms = performance.now() - started;
  console.log("advance(3 * 3600) took " + Math.round(ms) + " ms");
  expect(ticks.length).toBe(3);
  expect(ticks[2]! - ticks[0]!).toBe(2 * 3600 * 1000);
  expect(ms).toBeLessThan(1000);
});
`);
}

describe.each(selectedTargets().filter((t) => t === "cluster"))("an operator project of one's own, against %s", (targetName: TargetName) => {
  const need = targetSuite(targetName, { crds: [], cleanup: [HELLOS] });

  test("npm pack → npm install → kobun init → edit → kobun test → kobun build → the binary handles an object on the API server", async () => {
    const t = need();
    const work = mkdtempSync(join(tmpdir(), "kobun-e2e-project-"));
    const steps: string[] = [];
    const t0 = performance.now();
    const step = async (label: string, cwd: string, argv: string[]) => {
      const r = await sh(cwd, argv);
      steps.push(`${label} ${(r.ms / 1000).toFixed(1)} s`);
      return r.out;
    };
    try {
      await step("npm pack", ROOT, ["npm", "pack", "--silent", "--pack-destination", work]);
      const tarball = join(work, `kobun-${VERSION}.tgz`);
      expectPackaged((await sh(work, ["tar", "tzf", tarball])).out.split("\n").filter(Boolean).map((f) => f.replace(/^package\//, "")));
      const project = join(work, "my-operator");
      mkdirSync(project);
      await step("npm init -y", project, ["npm", "init", "-y"]);
      const installed = await step("npm install kobun", project, ["npm", "install", "--prefer-offline", tarball]);
      expect(firstInstallWarnings(installed)).toEqual([]);
      expectLinksResolve(join(project, "node_modules/kobun"));
      expect(await step("kobun docs", project, ["npx", "kobun", "docs"])).toContain(join(project, "node_modules/kobun/docs"));
      const init = await step("kobun init", project, ["npx", "kobun", "init", "."]);
      expect(init).toContain(`kobun: file:../kobun-${VERSION}.tgz`);
      expect(init).toContain("package.json: merged into the existing one (name my-operator");
      const merged = JSON.parse(readFileSync(join(project, "package.json"), "utf8"));
      expect([merged.name, merged.type, merged.scripts.test]).toEqual(["my-operator", "module", "kobun test"]);
      addEchoes(project);
      addScheduleTest(project);
      expect(npmWarnings(await step("npm install", project, ["npm", "install", "--prefer-offline"]))).toEqual([]);
      // Independent checks at once (their wall time is the longest one's): the project
      // typechecks (kobun's own sources from node_modules under the project's tsconfig, and the
      // handler that uses the new field), its tests pass, it builds, and `kobun dev` runs it
      // against a sandbox with its CRD installed (--once: it stops after the demo of the scaffold's
      // sample; its strict schema prunes spec.demo, so the update step changes a label).
      const [, tested, built, dev] = await Promise.all([
        step("tsc", project, ["npx", "tsc", "--noEmit", "-p", "."]),
        step("kobun test", project, ["npx", "kobun", "test"]),
        step("kobun build", project, ["npx", "kobun", "build"]),
        step("kobun dev", project, ["npx", "kobun", "dev", "--once"]),
      ]);
      expect(dev).toContain("installed=hellos.example.com"); // and it exited 0 (sh checks): started and stopped cleanly
      expect(dev).toContain("demo: updated Hello/hello-demo");
      expect(dev).toContain("demo: deleted Hello/hello-demo: gone\n");   // a create handler holds no finalizer
      expect(tested).toMatch(/\b3 pass\b/);
      steps.push(tested.match(/advance\(3 \* 3600\) took \d+ ms/)![0]);
      expect(tested).toMatch(/\b0 fail\b/);
      expect(built).toContain("built dist/kobun");
      // A type error (Bun would run it: the tests alone pass) fails kobun test with tsc's message, and no test runs.
      const wrong = join(project, "handlers/wrong.ts");
      writeFileSync(wrong, 'import { Hellos } from "./hello.ts";\nexport const times: string = ({} as { spec: { times: number } }).spec.times;\nvoid Hellos;\n');
      const mistyped = await sh(project, ["npx", "kobun", "test"], 120_000, true);
      expect(mistyped.code).toBe(1);
      expect(mistyped.out).toMatch(/handlers\/wrong\.ts.*error TS2322/);
      expect(mistyped.out).toContain("kobun test: tsc found type errors (above), so no test ran");
      expect(mistyped.out).not.toMatch(/\b\d+ pass\b/);
      rmSync(wrong);
      const binary = join(project, "dist/kobun");

      // The CRD as the binary itself prints it (from the TypeBox schema, with the new field).
      const manifests = await step("manifests", project, [binary, "manifests", "--standalone"]);
      expect(manifests).toContain("times:");
      writeFileSync(join(work, "manifests.yaml"), manifests);
      await installCrds(t.client, join(work, "manifests.yaml"));

      const ns = await createNamespace(t.client, "e2e-project");
      const op = startOperator("my-operator", t.kubeconfigPath, ["--standalone", "-n", ns], binary);
      await t.client.create(HELLOS, ns, { apiVersion: "example.com/v1", kind: "Hello", metadata: { name: "world" }, spec: { greeting: "hello", times: 3 } });
      // Awaited on a watch, as kobun/testing's until does.
      const handled = await awaitObject({
        client: t.client, resource: HELLOS, namespace: ns, name: "world", what: "handled by the project's binary",
        test: (o) => o?.status?.echo_fn && o.status.create_fn, timeoutMs: 20_000, signal: new AbortController().signal, logger: silentLogger,
      });
      expect(handled?.status?.echo_fn).toEqual({ echoes: ["hello", "hello", "hello"] });
      expect(handled?.status?.create_fn).toEqual({ message: "hello, world" });
      // kobun's progress beside the results in status.kobun (the CRD leaves room for it): not pruned to annotations.
      expect(handled?.status?.kobun).toBeDefined();
      expect(handled?.metadata.annotations?.["kobun.dev/last-handled-configuration"]).toBeUndefined();
      expect((await op.stop()).code).toBe(0);
      console.log(`[project.e2e] ${steps.join("; ")}; all ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }, 300_000);
});
