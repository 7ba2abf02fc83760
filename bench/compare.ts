// One-session comparison of this checkout's operator with another's: `bun bench/compare.ts
// <other checkout> [rounds=3] [bench…=latency lifecycle]` runs each bench `rounds` times,
// alternating other / this (KOBUN_BENCH_OPERATOR_ROOT, common.ts), the sandbox being this
// checkout's for both, and prints each numeric figure's median and range per side, with the
// load average before and after. The other checkout needs node_modules (a symlink will do).

import { loadavg } from "node:os";
import { resolve } from "node:path";
import { median, root } from "./common.ts";

const [otherArg, roundsArg, ...benchArgs] = process.argv.slice(2);
if (!otherArg) {
  console.error("usage: bun bench/compare.ts <other checkout> [rounds] [bench…]");
  process.exit(2);
}
const other = resolve(otherArg);
const rounds = Number(roundsArg ?? 3);
if (!Number.isInteger(rounds) || rounds < 1) {
  console.error(`bench/compare: rounds must be a positive integer, got ${roundsArg}`);
  process.exit(2);
}
const benches = benchArgs.length ? benchArgs : ["latency", "lifecycle"];
const sides = { other, this: root } as const;
/** figures[bench][side][figure] = one value per round */
const figures: Record<string, Record<string, Record<string, number[]>>> = {};
const load = (when: string) => console.log(`load average ${when}: ${loadavg().map((l) => l.toFixed(2)).join(" ")}`);

load("before");
for (let round = 0; round < rounds; round++) {
  for (const name of benches) {
    for (const [side, dir] of Object.entries(sides)) {
      const run = Bun.spawnSync([process.execPath, `${import.meta.dir}/${name}.ts`], {
        env: { ...process.env, KOBUN_BENCH_OPERATOR_ROOT: dir }, stdout: "pipe", stderr: "inherit",
      });
      if (run.exitCode !== 0) throw new Error(`bench/compare: ${name} against ${dir} exited with ${run.exitCode}`);
      const line = run.stdout.toString().split("\n").find((l) => l.startsWith('{"bench"'));
      if (!line) throw new Error(`bench/compare: ${name} against ${dir} printed no figures`);
      for (const [k, v] of Object.entries(JSON.parse(line))) {
        if (typeof v !== "number") continue;
        ((((figures[name] ??= {})[side] ??= {})[k]) ??= []).push(v);
      }
    }
  }
}
load("after");
const show = (vs: number[] = []) => (vs.length ? `${median(vs).toFixed(2)} (${Math.min(...vs).toFixed(2)}–${Math.max(...vs).toFixed(2)})` : "-");
console.log(`\n| bench | figure | other: median (range) | this: median (range) |\n|---|---|---|---|`);
for (const [name, bySide] of Object.entries(figures)) {
  for (const k of Object.keys(bySide.this ?? bySide.other ?? {})) console.log(`| ${name} | ${k} | ${show(bySide.other?.[k])} | ${show(bySide.this?.[k])} |`);
}
console.log(`\nother = ${other}, this = ${root}, ${rounds} rounds interleaved`);
