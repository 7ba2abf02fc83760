// `npm run test:e2e` → `bun test/e2e/run.ts [--target sandbox|cluster|sandbox,cluster] [bun test args...]`
//
//  1. builds (or reuses) kube-apiserver + etcd + kubectl: test/cluster/build.sh (skipped when
//     KOBUN_E2E_KUBECONFIG names a cluster and KOBUN_E2E_KUBECTL a kubectl), and Prometheus:
//     test/prometheus/build.sh, and Jaeger: test/jaeger/build.sh;
//  2. builds dist/kobun (handlers/) and dist/kobun-e2e (test/e2e/handlers/);
//  3. runs the suite (every ./test/e2e/*.e2e.ts file) once per target (KOBUN_E2E_TARGET=…),
//     each in its own `bun test` process: the targets at the same time (both mostly wait on
//     servers and timers; the first one's output is streamed, the others' printed when all
//     have ended), but the files of ALONE (wall-time bounds) after that, one target at a time;
//     KOBUN_E2E_SERIAL=1 or extra bun test args: one whole run per target, one after the other;
//     then
//     test/scratch/chroot.test.ts (the FROM scratch proof; KOBUN_E2E_SKIP_SCRATCH=1 leaves it
//     out, and so do extra bun test args);
//  4. prints `e2e: N passed, N failed` as its last line; exits 1 if anything failed.
//
// Env: KOBUN_E2E_TARGET (default "sandbox,cluster"), KOBUN_E2E_KUBECONFIG (explicit kubeconfig
// of a cluster to use as the "cluster" target; never the default one), KOBUN_E2E_VERBOSE=1
// (operators' logs to stderr), KOBUN_E2E_SKIP_BUILD=1 (reuse existing dist/ binaries),
// KOBUN_E2E_KUBECTL (a kubectl to use instead of the one build.sh builds), KOBUN_E2E_AFTER (a file the
// wall-time-bound files wait for: CI's unit suite, run alongside, writes it when it ends).

import { join, resolve } from "node:path";

const root = resolve(import.meta.dir, "../..");
const bun = process.execPath;

function parseArgs(argv: string[]): { targets: string[]; rest: string[] } {
  let targets = (process.env.KOBUN_E2E_TARGET || "sandbox,cluster").split(",").map((s) => s.trim()).filter(Boolean);
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--target") targets = (argv[++i] ?? "").split(",").filter(Boolean);
    else if (a.startsWith("--target=")) targets = a.slice(9).split(",").filter(Boolean);
    else rest.push(a);
  }
  for (const t of targets) if (t !== "sandbox" && t !== "cluster") throw new Error(`unknown target ${t} (sandbox, cluster)`);
  return { targets, rest };
}

/** Runs a command with inherited output; returns its exit code and how long it took. */
async function step(label: string, cmd: string[], env: Record<string, string | undefined> = process.env): Promise<{ code: number; s: number }> {
  const t0 = performance.now();
  console.error(`[e2e] ${label}: ${cmd.map((c) => c.replace(root + "/", "")).join(" ")}`);
  const p = Bun.spawn(cmd, { cwd: root, env, stdin: "ignore", stdout: "inherit", stderr: "inherit" });
  const code = await p.exited;
  const s = (performance.now() - t0) / 1000;
  console.error(`[e2e] ${label}: exit ${code} in ${s.toFixed(1)} s`);
  return { code, s };
}

interface TestRun { pass: number; fail: number; code: number; s: number; summary: string; output: string }

/** `bun test` with its output kept, to read the summary lines, and passed through unless `buffered`. */
async function bunTest(label: string, dir: string, files: string[], extra: string[], target?: string, buffered = false): Promise<TestRun> {
  const t0 = performance.now();
  const env: Record<string, string | undefined> = { ...process.env };
  if (target) env.KOBUN_E2E_TARGET = target;
  delete env.KUBECONFIG;
  // Run from the suite's own directory: the root bunfig.toml (root = "test", and
  // pathIgnorePatterns keeping test/e2e and test/scratch out of `npm test`) makes bun ignore
  // an explicit path to these files when started from the repository root.
  const cmd = [bun, "test", ...files.map((f) => `./${f}`), ...extra];
  console.error(`[e2e] ${label}: (cd ${dir} && bun ${cmd.slice(1).join(" ")})`);
  const p = Bun.spawn(cmd, { cwd: join(root, dir), env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  // Bounded: a hung run is killed (every test has its own timeout far below this).
  const killer = setTimeout(() => p.kill("SIGKILL"), 20 * 60_000);
  let text = "";
  const pipe = async (stream: ReadableStream<Uint8Array>, to: NodeJS.WriteStream) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      const s = decoder.decode(chunk, { stream: true });
      text += s;
      if (!buffered) to.write(s);
    }
  };
  await Promise.all([pipe(p.stdout, process.stdout), pipe(p.stderr, process.stderr)]);
  const code = await p.exited;
  clearTimeout(killer);
  const num = (re: RegExp) => {
    const m = [...text.matchAll(re)].pop();
    return m ? Number(m[1]) : 0;
  };
  const pass = num(/^\s*(\d+) pass\s*$/gm);
  let fail = num(/^\s*(\d+) fail\s*$/gm);
  if (code !== 0 && fail === 0) fail = 1; // crashed or failed outside a test: count it
  const s = (performance.now() - t0) / 1000;
  const gaps = target === "sandbox" ? text.split("\n").filter((l) => /^\(pass\).*\[known sandbox gap\]/.test(l)).length : 0;
  const gapNote = gaps ? ` (${gaps} of the passes are known sandbox gaps, run as test.failing)` : "";
  const summary = `[e2e] ${label}: ${pass} pass, ${fail} fail, exit ${code}, ${s.toFixed(1)} s${gapNote}`;
  console.error(summary);
  return { pass, fail, code, s, summary, output: buffered ? text : "" };
}

const { targets, rest } = parseArgs(process.argv.slice(2));
let failed = 0;
let passed = 0;
const timings: string[] = [];

// build.sh also builds kubectl, which the kubectl suite needs on every target.
if (!(process.env.KOBUN_E2E_KUBECONFIG && process.env.KOBUN_E2E_KUBECTL)) {
  const r = await step("control plane + kubectl", [join(root, "test/cluster/build.sh")]);
  timings.push(`control-plane build ${r.s.toFixed(1)} s`);
  // On failure the scenarios that need them still run, and fail with the reason.
}

// Prometheus for observability.e2e.ts (cached like the control plane; a no-op once built).
{
  const r = await step("prometheus", [join(root, "test/prometheus/build.sh")]);
  timings.push(`prometheus build ${r.s.toFixed(1)} s`);
}

// Jaeger for tracing.e2e.ts (cached the same way).
{
  const r = await step("jaeger", [join(root, "test/jaeger/build.sh")]);
  timings.push(`jaeger build ${r.s.toFixed(1)} s`);
}

if (!process.env.KOBUN_E2E_SKIP_BUILD) {
  const a = await step("build dist/kobun", [bun, "run", "build.ts"]);
  const b = await step("build dist/kobun-e2e", [bun, "run", "build.ts", "--handlers", "test/e2e/handlers", "--outfile", "dist/kobun-e2e"]);
  timings.push(`binaries ${(a.s + b.s).toFixed(1)} s`);
  // A failed build is reported by every scenario (the binary is missing or stale): count it too.
  if (a.code !== 0 || b.code !== 0) failed++;
}

// Every *.e2e.ts file of test/e2e is one part of the suite; all run once per target.
const suites = [...new Bun.Glob("*.e2e.ts").scanSync(join(root, "test/e2e"))].sort();
/**
 * Files whose assertions bound wall times (lease duration + 2 s after a SIGKILL, shares of
 * 3,000 objects): run one target at a time, after the others, with no other suite of ours
 * beside them (at the same time as the other target's suite they missed their bound under load).
 */
const ALONE = new Set(["scaling.e2e.ts", "scaling-kill.e2e.ts", "lease-handover.e2e.ts"]);

/** The suite of each target: the targets at once on all but ALONE, then ALONE target by target. */
async function runTargets(): Promise<void> {
  const record = (target: string, r: TestRun) => {
    passed += r.pass;
    failed += r.fail;
    timings.push(`${target} ${r.s.toFixed(1)} s (${r.pass} pass, ${r.fail} fail)`);
  };
  // Extra bun test args (a -t filter) could match nothing in one part: then one run per target.
  if (process.env.KOBUN_E2E_SERIAL || rest.length > 0) {
    for (const target of targets) record(target, await bunTest(`target ${target}`, "test/e2e", suites, rest, target));
    return;
  }
  const together = suites.filter((f) => !ALONE.has(f));
  const alone = suites.filter((f) => ALONE.has(f));
  const t0 = performance.now();
  const runs = await Promise.all(targets.map((target, i) => bunTest(`target ${target}`, "test/e2e", together, rest, target, i > 0)));
  for (const r of runs.filter((r) => r.output)) {
    process.stdout.write(r.output);
    console.error(r.summary);
  }
  timings.push(`targets at once ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  targets.forEach((target, i) => record(target, runs[i]!));
  if (alone.length === 0) return;
  await quietBeforeAlone();
  for (const target of targets) record(`${target} (${alone.join(", ")})`, await bunTest(`target ${target}, alone`, "test/e2e", alone, rest, target));
}
/**
 * KOBUN_E2E_AFTER=<file>: the wall-time-bound files wait until that file exists (CI runs the unit
 * suite beside this one and writes its exit code there when it ends): they run on a quiet machine.
 */
async function quietBeforeAlone(): Promise<void> {
  const after = process.env.KOBUN_E2E_AFTER;
  if (!after) return;
  const t0 = performance.now();
  if (!(await Bun.file(after).exists())) console.error(`[e2e] waiting for ${after} before the wall-time-bound files`);
  while (!(await Bun.file(after).exists()) && performance.now() - t0 < 30 * 60_000) await Bun.sleep(1000);
  timings.push(`waited ${((performance.now() - t0) / 1000).toFixed(1)} s for ${after}`);
}

await runTargets();

// The FROM-scratch proof (chroot into exactly the image's files); not target-specific.
if (!process.env.KOBUN_E2E_SKIP_SCRATCH && rest.length === 0) {
  const r = await bunTest("scratch", "test/scratch", ["chroot.test.ts"], [], undefined);
  passed += r.pass;
  failed += r.fail;
  timings.push(`scratch chroot ${r.s.toFixed(1)} s (${r.pass} pass, ${r.fail} fail)`);
}

console.error(`[e2e] ${timings.join("; ")}`);
console.log(`e2e: ${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
