// runtime/code-pages.ts: the executable's read-only mappings are found in /proc/self/maps, madvise
// (MADV_PAGEOUT) reclaims their resident pages, and the trimmer waits for a quiet spell and gives up once.
// test/e2e/code-pages.e2e.ts holds a compiled operator's RSS to it.

import { expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CodeTrimmer, compiledExecutable, executableRanges, QUIET_FOR_MS, trimCodePages, type TrimOutcome } from "../../src/runtime/code-pages.ts";
import { memorySink, Logger } from "../../src/util/index.ts";

const MAPS = [
  "00400000-00600000 r--p 00000000 08:01 131 /opt/my operator/kobun",
  "00600000-02600000 r-xp 00200000 08:01 131 /opt/my operator/kobun",
  "02600000-02700000 rw-p 02200000 08:01 131 /opt/my operator/kobun",
  "7f0000000000-7f0000100000 r-xp 00000000 08:01 77 /usr/lib/x86_64-linux-gnu/libc.so.6",
  "7f0000200000-7f0000300000 rw-p 00000000 00:00 0 ",
  "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]",
].join("\n");

test("the executable's mappings that are not writable, a path with a space included; other files and rw- left", () => {
  expect(executableRanges(MAPS, "/opt/my operator/kobun")).toEqual([
    { from: 0x400000n, to: 0x600000n },
    { from: 0x600000n, to: 0x2600000n },
  ]);
  expect(executableRanges(MAPS, "/opt/other")).toEqual([]);
});

// A page mapped by another process stays (the kernel reclaims only pages this process alone maps): Bun's own
// executable is shared by every bun process on the machine, so the trim is shown in a compiled program of its own.
const PROBE = `
import { trimCodePages } from ${JSON.stringify(join(import.meta.dir, "../../src/runtime/code-pages.ts"))};
const rssFileKiB = async () => Number((await Bun.file("/proc/self/status").text()).match(/RssFile:\\s+(\\d+)/)![1]);
const before = await rssFileKiB();
const outcome = await trimCodePages();
console.log(JSON.stringify({ before, after: await rssFileKiB(), outcome }));
`;

test.skipIf(process.platform !== "linux")("a trim hands a compiled program's resident code pages back: its RssFile falls", async () => {
  const work = mkdtempSync(join(tmpdir(), "kobun-code-pages-"));
  try {
    writeFileSync(join(work, "probe.ts"), PROBE);
    const build = Bun.spawnSync([process.execPath, "build", "--compile", "probe.ts", "--outfile", "probe"], { cwd: work, stderr: "pipe" });
    expect(build.exitCode, build.stderr.toString()).toBe(0);
    const run = Bun.spawnSync([join(work, "probe")], { cwd: work, env: { PATH: process.env.PATH ?? "" }, stderr: "pipe" });
    expect(run.exitCode, run.stderr.toString()).toBe(0);
    const { before, after, outcome } = JSON.parse(run.stdout.toString());
    expect(outcome).toMatchObject({ kind: "trimmed" });
    expect(outcome.mappings).toBeGreaterThan(0);
    // A compiled hello-world has ~24 MB of its runtime resident; measured: 30 → 9 MB.
    expect(after).toBeLessThan(before / 2);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}, 60_000);

function trimmerAt(outcomes: TrimOutcome[]) {
  const state = { quiet: true, wakes: 0, calls: 0, pending: [] as Array<{ run: () => void; ms: number; cancelled: boolean }> };
  const sink = memorySink("debug", "json");
  const activity = { quiet: () => state.quiet, wakes: () => state.wakes };
  const trimmer = new CodeTrimmer(new Logger(sink), activity, {
    trim: async () => outcomes[state.calls++]!,
    later: (run, ms) => {
      const entry = { run, ms, cancelled: false };
      state.pending.push(entry);
      return () => void (entry.cancelled = true);
    },
  });
  return { trimmer, state, lines: () => sink.lines.map((line) => JSON.parse(line)) };
}
const settled = () => new Promise<void>((resolve) => setImmediate(resolve));
const trimmed: TrimOutcome = { kind: "trimmed", mappings: 3, bytes: 64 << 20 };

test("at start-up the trimmer trims at once; after activity, only once the process stayed quiet for QUIET_FOR_MS", async () => {
  const { trimmer, state, lines } = trimmerAt(Array(3).fill(trimmed));
  trimmer.now();
  await settled();
  expect(state.calls).toBe(1);
  trimmer.quiet();
  trimmer.quiet(); // one pending at a time
  expect(state.pending.map((p) => p.ms)).toEqual([QUIET_FOR_MS]);
  state.pending[0]!.run();
  await settled();
  expect(state.calls).toBe(2);
  expect(lines()).toHaveLength(2);
  expect(lines()[0]).toMatchObject({ level: "debug", msg: "code pages handed back to the kernel", mappings: 3, mappedMiB: 64 });
});

test("a quiet spell that activity breaks trims nothing; one that began again meanwhile trims QUIET_FOR_MS after its start", async () => {
  const { trimmer, state } = trimmerAt(Array(3).fill(trimmed));
  trimmer.quiet();
  state.quiet = false; // busy again when the wait ends: nothing, and nothing pending
  state.wakes++;
  state.pending[0]!.run();
  await settled();
  expect([state.calls, state.pending.length]).toEqual([0, 1]);
  state.quiet = true;
  trimmer.quiet();
  state.wakes++; // a wake and a new quiet between: the wait starts over from the new spell
  state.pending[1]!.run();
  await settled();
  expect([state.calls, state.pending.length]).toEqual([0, 3]);
  state.pending[2]!.run();
  await settled();
  expect(state.calls).toBe(1);
  trimmer.quiet();
  trimmer.stop();
  expect(state.pending[3]!.cancelled).toBe(true);
});

test("where it cannot trim, the trimmer says why once at debug and never asks again", async () => {
  const { trimmer, state, lines } = trimmerAt([{ kind: "unavailable", why: "no libc" }]);
  trimmer.now();
  await settled();
  trimmer.quiet();
  expect(state.calls).toBe(1);
  expect(state.pending).toEqual([]);
  expect(lines()).toMatchObject([{ level: "debug", msg: "the runtime's code pages are not trimmed here", why: "no libc" }]);
  expect(lines()).toHaveLength(1);
});

test("a trim asked for unlogged (one of the lean start-up's many) writes no line; a refusal is still said once", async () => {
  const { trimmer, state, lines } = trimmerAt([trimmed, trimmed, { kind: "unavailable", why: "no libc" }]);
  trimmer.now({ logged: false });
  await settled();
  trimmer.now({ logged: false });
  await settled();
  expect(state.calls).toBe(2);
  expect(lines()).toEqual([]);
  trimmer.now({ logged: false });
  await settled();
  expect(lines()).toMatchObject([{ level: "debug", msg: "the runtime's code pages are not trimmed here", why: "no libc" }]);
});

test("a compiled executable is told by Bun's embedded file system; a script run by bun is not one", () => {
  expect(compiledExecutable("/$bunfs/root/kobun")).toBe(true);
  expect(compiledExecutable("B:/~BUN/root/kobun.exe")).toBe(true);
  expect(compiledExecutable(Bun.main)).toBe(false);
});
