// Where kobun's idle RSS goes, against the runtime's own share: on a real kube-apiserver + etcd
// (test/cluster), each subject is started, left to settle (measure.ts's settledRss), and its
// /proc/<pid>/smaps_rollup and smaps read:
// - hello: a compiled hello-world that prints and stays up (bench/peers/memory.ts's baseline);
// - helloTls: the same, having made one TLS request to the API server and holding a watch open
//   on that connection (HTTP/2, as kobun speaks): what TLS + fetch cost any Bun program;
// - kobun (and any --binary given): the example operator's binary watching a namespace with one
//   object, read once that object is handled.
// Each reading has RSS, its anonymous and file parts, RSS per mapping (the executable as
// [exe]) and, of the executable, per ELF section (sections.ts): .text is the runtime's code
// the process ran (the JIT compilers among it), .bun the program's own bundle and bytecode.
// Subjects run interleaved (A, B, C, A, B, C...); each figure is the median of its rounds.
// Each executable is dropped from the page cache before each start (coldPageCache): how much of
// its file a process maps depends on how its pages came into the cache, not only on what it runs.
// The same bytes idled at 46.1 MiB from a file just written (a fresh build: its page cache is in
// large folios, of which more gets mapped) and at 41.3-43.9 from copies whose pages had been read
// back from disk (small folios); so a binary built earlier measured ~2 MiB "lighter" in .text than
// one just built, from identical code (a bisect pinned that on b1651e4, which changed no such thing).
// --late S: each subject is read again S seconds after it started, as "<label>@Ss": an
// operator's periodic work (the heap pacer's tick) gets JIT-compiled after the settled reading
// (Baseline at ~3.6 s, DFG at ~12 s), and so do those compilers' pages.
//
//   bun bench/idle.ts [--rounds 3] [--binary label=path ...] [--mappings 12] [--late 25]
//
// kobun is built fresh by this checkout's build.ts (or KOBUN_BENCH_OPERATOR_ROOT's, as
// bench/real.ts does); --binary: also (with label kobun: instead) measure that binary, e.g. one
// another checkout built with `bun build.ts --handlers bench/peers/handlers --outfile ...`.
// Prints one JSON line per reading and a summary; writes nothing to bench/results.json.

import { mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { parseArgs } from "node:util";
import { KubeClient } from "../src/kube/client.ts";
import { buildBinaries, startCluster } from "../test/cluster/cluster.ts";
import { installCrds, rawWatch } from "../test/e2e/harness/kube.ts";
import { lineReader, median, report, root, round } from "./common.ts";
import { kobunBenchBinary } from "./peers/index.ts";
import { namespaceWithObjects, settledRss } from "./peers/measure.ts";
import { sectionRssKiB } from "./sections.ts";

const { values } = parseArgs({ options: { rounds: { type: "string", default: "3" }, binary: { type: "string", multiple: true, default: [] }, mappings: { type: "string", default: "12" }, late: { type: "string", default: "0" } } });
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds: a positive integer, got "${values.rounds}"`);
const lateS = Number(values.late);
if (!Number.isFinite(lateS) || lateS < 0) throw new Error(`--late: a number of seconds, got "${values.late}"`);
const given = values.binary.map((spec) => {
  const at = spec.indexOf("=");
  if (at < 1) throw new Error(`--binary: label=path, got "${spec}"`);
  return { label: spec.slice(0, at), path: spec.slice(at + 1) };
});

/** One reading: smaps_rollup's totals and, per mapping (file and permissions, or [anon]/[heap]), RSS in KiB. */
interface Reading { rssKiB: number; anonKiB: number; fileKiB: number; mappings: Record<string, { rssKiB: number; anonKiB: number }>; sections: Record<string, number> }

/** Totals of /proc/<pid>/smaps_rollup and the RSS of each mapping of /proc/<pid>/smaps, summed by name and permissions. */
function readSmaps(pid: number): Reading {
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(rollup)?.[1] ?? 0);
  const mappings: Reading["mappings"] = {};
  const exe = readlinkSync(`/proc/${pid}/exe`);
  let current: { rssKiB: number; anonKiB: number } | undefined;
  for (const line of readFileSync(`/proc/${pid}/smaps`, "utf8").split("\n")) {
    const header = /^[0-9a-f]+-[0-9a-f]+ (\S+) \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (header) {
      const path = header[2];
      const name = !path ? "[anon]" : path === exe ? "[exe]" : path.startsWith("[") ? path : basename(path);
      current = mappings[`${name} ${header[1]}`] ??= { rssKiB: 0, anonKiB: 0 };
      continue;
    }
    const value = /^(Rss|Anonymous):\s+(\d+) kB/.exec(line);
    if (value && current) current[value[1] === "Rss" ? "rssKiB" : "anonKiB"] += Number(value[2]);
  }
  return { rssKiB: field("Rss"), anonKiB: field("Anonymous"), fileKiB: field("Rss") - field("Anonymous"), mappings, sections: sectionRssKiB(pid) };
}

buildBinaries();
const work = mkdtempSync(join(tmpdir(), "kobun-bench-idle-"));
const cluster = await startCluster({ timeoutMs: 120_000, controllerManager: false });
const client = await KubeClient.connect({ kubeconfig: cluster.kubeconfigPath, retries: 2 });
try {
  const caPath = join(work, "ca.pem");
  const tokenPath = join(work, "token");
  writeFileSync(caPath, cluster.caPem);
  writeFileSync(tokenPath, cluster.token, { mode: 0o600 });
  await installCrds(client, join(root, "handlers/kobunexample.crd.yaml"));
  const hello = await compiled("hello", 'console.log("hello");\nsetInterval(() => {}, 1 << 30);\n');
  const helloTls = await compiled("hello-tls", helloTlsSource());
  const kobuns = given.some((b) => b.label === "kobun") ? given : [{ label: "kobun", path: kobunBenchBinary() }, ...given];
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: work, LANG: "C.UTF-8" };

  const subjects: { label: string; binary: string; start: (round: number) => Promise<{ pid: number; stop: () => Promise<void> }> }[] = [
    { label: "hello", binary: hello, start: () => printing([hello], env) },
    { label: "helloTls", binary: helloTls, start: (r) => printing([helloTls, cluster.url, caPath, tokenPath, `idle-tls-${r}`], env) },
    ...kobuns.map((b, i) => ({ label: b.label, binary: b.path, start: (r: number) => operator(b.path, `idle-${i}-${r}`, env) })),
  ];
  const readings: Record<string, Reading[]> = {};
  for (let r = 0; r < rounds; r++) {
    for (const subject of subjects) {
      coldPageCache(subject.binary);
      const started = performance.now();
      const { pid, stop } = await subject.start(r);
      try {
        const settled = await settledRss(pid, { maxMs: 30_000 });
        const reading = readSmaps(pid);
        (readings[subject.label] ??= []).push(reading);
        report("idle-reading", { subject: subject.label, round: r, rssMiB: mib(reading.rssKiB), anonMiB: mib(reading.anonKiB), fileMiB: mib(reading.fileKiB), settledAfterMs: Math.round(settled.afterMs), bounded: settled.bounded });
        if (lateS > 0) {
          await Bun.sleep(Math.max(0, started + lateS * 1000 - performance.now())); // a point in the subject's life, not an event
          const late = readSmaps(pid);
          (readings[`${subject.label}@${lateS}s`] ??= []).push(late);
          report("idle-reading", { subject: `${subject.label}@${lateS}s`, round: r, rssMiB: mib(late.rssKiB), anonMiB: mib(late.anonKiB), fileMiB: mib(late.fileKiB) });
        }
      } finally {
        await stop();
      }
    }
  }
  report("idle", summary(readings, Number(values.mappings)));
} finally {
  client.close();
  await cluster.stop();
  rmSync(work, { recursive: true, force: true });
}

/**
 * Drops `file` from the page cache (written back first: dirty pages would stay), so that every
 * subject starts from the same state: its pages read from disk, as a container's first start reads
 * its image. Without it, a binary just built (its pages still the large folios it was written in)
 * maps 2-5 MiB more of its .text than the same bytes read back, and comparisons follow build times.
 */
function coldPageCache(file: string): void {
  for (const command of [["sync", file], ["dd", `if=${file}`, "iflag=nocache", "count=0", "status=none"]]) {
    const done = Bun.spawnSync(command, { stdout: "ignore", stderr: "pipe" });
    if (done.exitCode !== 0) throw new Error(`bench: ${command.join(" ")}: ${done.stderr.toString().trim()}`);
  }
}

function mib(kib: number): number {
  return round(kib / 1024, 1);
}

/** Medians per subject, each over hello's; and the mappings where kobun's RSS differs most from hello's. */
function summary(readings: Record<string, Reading[]>, top: number): Record<string, unknown> {
  const med = (list: Reading[], pick: (r: Reading) => number) => median(list.map(pick));
  const figures: Record<string, Record<string, number>> = {};
  for (const [label, list] of Object.entries(readings)) {
    const rss = list.map((r) => r.rssKiB);
    figures[label] = { rssMiB: mib(median(rss)), rssMinMiB: mib(Math.min(...rss)), rssMaxMiB: mib(Math.max(...rss)), anonMiB: mib(med(list, (r) => r.anonKiB)), fileMiB: mib(med(list, (r) => r.fileKiB)) };
  }
  const base = figures.hello!;
  const over = Object.fromEntries(Object.entries(figures).filter(([l]) => l !== "hello").map(([l, f]) => [l, { rssMiB: round(f.rssMiB! - base.rssMiB!, 1), anonMiB: round(f.anonMiB! - base.anonMiB!, 1), fileMiB: round(f.fileMiB! - base.fileMiB!, 1) }]));
  const names = new Set(Object.values(readings).flatMap((list) => list.flatMap((r) => Object.keys(r.mappings))));
  const perMapping = [...names].map((name) => {
    const row: Record<string, number | string> = { mapping: name };
    for (const [label, list] of Object.entries(readings)) row[label] = round(med(list, (r) => r.mappings[name]?.rssKiB ?? 0) / 1024, 2);
    return row;
  }).sort((a, b) => Math.abs((b.kobun as number) - (b.hello as number)) - Math.abs((a.kobun as number) - (a.hello as number))).slice(0, top);
  const sectionNames = new Set(Object.values(readings).flatMap((list) => list.flatMap((r) => Object.keys(r.sections))));
  const perSection = [...sectionNames].map((name) => {
    const row: Record<string, number | string> = { section: name };
    for (const [label, list] of Object.entries(readings)) row[label] = round(med(list, (r) => r.sections[name] ?? 0) / 1024, 2);
    return row;
  }).filter((row) => Object.values(row).some((v) => typeof v === "number" && v >= 0.05));
  return { rounds, figures, overHello: over, mappingsMiB: perMapping, executableSectionsMiB: perSection };
}

/** `source` compiled with build.ts's options (src/cli/project/build.ts) into the work directory. */
async function compiled(name: string, source: string): Promise<string> {
  const entry = join(work, `${name}.ts`);
  await Bun.write(entry, source);
  const outfile = join(work, name);
  const built = await Bun.build({
    entrypoints: [entry], target: "bun", format: "esm", bytecode: true, sourcemap: "none",
    minify: { whitespace: true, syntax: true, identifiers: true, keepNames: true },
    compile: { outfile, autoloadDotenv: false, autoloadBunfig: false },
  });
  if (!built.success) throw new Error(`bench: compiling ${name} failed: ${built.logs.join("; ")}`);
  return outfile;
}

/** One GET of /api and a watch held open on the same HTTP/2 connection, then "ready" and idle. */
function helloTlsSource(): string {
  // Bun.file, not node:fs: importing node:fs alone costs a compiled program ≈ 5 MB (its JS and what it loads).
  return `const [server, caPath, tokenPath, namespace] = process.argv.slice(2);
const tls = { ca: await Bun.file(caPath).text() };
const headers = { authorization: "Bearer " + (await Bun.file(tokenPath).text()).trim(), accept: "application/json" };
const api = await fetch(server + "/api", { tls, headers, protocol: "http2" });
if (!api.ok) { console.error("GET /api: HTTP " + api.status); process.exit(1); }
await api.json();
const watch = await fetch(server + "/api/v1/namespaces/" + namespace + "/configmaps?watch=true", { tls, headers, protocol: "http2" });
if (!watch.ok) { console.error("watch: HTTP " + watch.status); process.exit(1); }
const reader = watch.body.getReader();
console.log("ready");
for (;;) { const { done } = await reader.read(); if (done) break; }
setInterval(() => {}, 1 << 30);
`;
}

/** A program that prints one line when ready; stopped by SIGKILL. */
async function printing(command: string[], env: Record<string, string>): Promise<{ pid: number; stop: () => Promise<void> }> {
  const child = Bun.spawn(command, { env, stdin: "ignore", stdout: "pipe", stderr: "inherit" });
  await lineReader(child.stdout).next(); // throws when it exits before it is ready
  return { pid: child.pid, stop: async () => { child.kill("SIGKILL"); await child.exited; } };
}

/** The operator binary on a fresh namespace with one object, once that object is handled. */
async function operator(binary: string, namespace: string, env: Record<string, string>): Promise<{ pid: number; stop: () => Promise<void> }> {
  const fromVersion = await namespaceWithObjects(client, namespace, 1);
  const handled = rawWatch(client, `/apis/kobun.dev/v1/namespaces/${namespace}/kobunexamples`, { resourceVersion: fromVersion },
    { timeoutMs: 60_000, until: (event) => event.object?.status?.create_fn !== undefined });
  const child = Bun.spawn([binary, "run", "--kubeconfig", cluster.kubeconfigPath, "-n", namespace, "--standalone", "-q"], { env, stdin: "ignore", stdout: "ignore", stderr: "inherit" });
  const stop = async () => { child.kill("SIGTERM"); await child.exited; };
  if ((await handled).ended !== "until") {
    await stop();
    throw new Error(`bench: ${basename(binary)} did not handle the object in ${namespace} within 60 s`);
  }
  return { pid: child.pid, stop };
}
