// `npm run bench`: every bench in turn, one JSON line of figures each (with their baselines
// and ratios). `bun bench/run.ts watch handling` runs only those; `real` starts a real
// kube-apiserver (test/cluster) and, the first time, installs Kopf and builds the Go peer; with
// its memory figures (slope, relist, idle) and `scale`'s 1k/10k/100k row, one run fills in
// the table of the real-server performance work. `reconcile` is on.reconcile against
// controller-runtime on the real API server (sizes: KOBUN_BENCH_RECONCILE_* in bench/reconcile.ts).

const all = ["watch", "gone", "handling", "latency", "peering", "lifecycle", "binary", "metrics", "tracing", "metadata-only", "daemons", "sharding", "real", "reconcile", "scale"] as const;
const flags: Partial<Record<(typeof all)[number], string[]>> = { real: ["--memory"] };
const wanted = process.argv.slice(2);
const chosen = wanted.length ? all.filter((name) => wanted.includes(name)) : all;

let failed = 0;
for (const name of chosen) {
  const run = Bun.spawnSync([process.execPath, `${import.meta.dir}/${name}.ts`, ...(flags[name] ?? [])], { stdout: "inherit", stderr: "inherit" });
  if (run.exitCode !== 0) {
    failed++;
    console.error(`bench ${name} failed (exit ${run.exitCode})`);
  }
}
process.exit(failed ? 1 : 0);
