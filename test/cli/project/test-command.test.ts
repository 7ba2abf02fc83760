// `kobun test` typechecks the project before its tests (Bun runs TypeScript unchecked): a type
// error stops it with tsc's own message and no test run; --no-typecheck runs the tests anyway.
// Each case is the real command in a child process, in a project whose node_modules is kobun's.

import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KOBUN_ROOT } from "../../../src/cli/project/build.ts";

const project = mkdtempSync(join(tmpdir(), "kobun-test-command-"));
afterAll(() => rmSync(project, { recursive: true, force: true }));
symlinkSync(join(KOBUN_ROOT, "node_modules"), join(project, "node_modules"));
writeFileSync(join(project, "tsconfig.json"), JSON.stringify({
  compilerOptions: {
    strict: true, noEmit: true, types: ["bun"], module: "Preserve", moduleResolution: "bundler",
    target: "ESNext", lib: ["ESNext"], skipLibCheck: true, allowImportingTsExtensions: true,
  },
  include: ["*.ts"],
}));
writeFileSync(join(project, "sum.test.ts"), `import { expect, test } from "bun:test";
import { sum } from "./sum.ts";
test("sum adds", () => expect(sum(1, 2)).toBe(3));
`);

async function kobunTest(...args: string[]): Promise<{ code: number; out: string }> {
  const proc = Bun.spawn([process.execPath, join(KOBUN_ROOT, "src/cli.ts"), "test", ...args], {
    cwd: project, stdout: "pipe", stderr: "pipe", env: { PATH: process.env.PATH ?? "", NO_COLOR: "1" },
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, out: out + err };
}

test("a type error fails kobun test with tsc's message, before any test runs; --no-typecheck runs them", async () => {
  // Runs as JavaScript (the tests pass), but `sum("1", 2)` in the caller would not typecheck.
  writeFileSync(join(project, "sum.ts"), "export function sum(a: number, b: number): number { return a + b; }\n" +
    'export const wrong: number = sum(1, 2) + "";\n');
  const failed = await kobunTest();
  expect(failed.code).toBe(1);
  expect(failed.out).toContain("sum.ts");
  expect(failed.out).toMatch(/error TS2322: Type 'string' is not assignable to type 'number'/);
  expect(failed.out).toContain("kobun test: tsc found type errors (above), so no test ran");
  expect(failed.out).not.toContain("sum adds");

  const unchecked = await kobunTest("--no-typecheck");
  expect(unchecked.code).toBe(0);
  expect(unchecked.out).toMatch(/\b1 pass\b/);

  writeFileSync(join(project, "sum.ts"), "export function sum(a: number, b: number): number { return a + b; }\n");
  const fixed = await kobunTest("-t", "sum");
  expect(fixed.code).toBe(0);
  expect(fixed.out).toMatch(/\b1 pass\b/);
}, 60_000);

// `--simulate=N` reaches simulate() in the project's tests: a real simulate() call that names no
// `schedules` runs N of them; without the flag its own default stands (the variable is unset).
test("--simulate=N sets the schedule budget a simulate() call sees; a bad N is refused", async () => {
  writeFileSync(join(project, "sum.ts"), "export function sum(a: number, b: number): number { return a + b; }\n");
  writeFileSync(join(project, "budget.test.ts"), `import { test } from "bun:test";
import { Registry } from ${JSON.stringify(join(KOBUN_ROOT, "src/index.ts"))};
import { simulate } from ${JSON.stringify(join(KOBUN_ROOT, "src/testing/index.ts"))};
import { Widgets } from ${JSON.stringify(join(KOBUN_ROOT, "test/simulation/widgets.ts"))};
test("budget", async () => {
  console.log("budget variable: " + (process.env.KOBUN_SIMULATE_SCHEDULES ?? "unset"));
  if (!process.env.KOBUN_SIMULATE_SCHEDULES) return;
  const registry = new Registry();
  registry.on.create(Widgets, async () => {}, { id: "noop" }); // serves the Widget CRD
  const result = await simulate({
    registry,
    scenario: async (world) => { await world.apply(Widgets, { metadata: { name: "w1" }, spec: {} }); },
  });
  console.log("schedules run: " + result.runs.length);
}, 60_000);
`);
  try {
    const three = await kobunTest("--no-typecheck", "--simulate=3", "budget");
    expect(three.out).toContain("schedules run: 3");
    expect(three.code).toBe(0);

    for (const args of [["budget"], ["--simulate", "budget"]]) {
      const unset = await kobunTest("--no-typecheck", ...args);
      expect(unset.out).toContain("budget variable: unset");
      expect(unset.code).toBe(0);
    }

    for (const bad of ["--simulate=0", "--simulate=many", "--simulate=", "--simulate=2.5"]) {
      const refused = await kobunTest("--no-typecheck", bad);
      expect(refused.code).toBe(2);
      expect(refused.out).toContain(`kobun test ${bad}: the schedule budget must be a positive whole number`);
      expect(refused.out).not.toContain("budget variable");
    }
    // A number after a space would be bun's path filter (no test file matches "200"): refused, saying how.
    const spaced = await kobunTest("--no-typecheck", "--simulate", "200");
    expect(spaced.code).toBe(2);
    expect(spaced.out).toContain("kobun test --simulate 200: write --simulate=200");
    expect(spaced.out).not.toContain("budget variable");
  } finally {
    rmSync(join(project, "budget.test.ts"));
  }
}, 120_000);

// bun test ignores a flag it does not know, so a misspelt kobun flag did nothing, silently:
// `--simulat=200` ran every simulate() with its default 16 schedules, `--no-typechek` typechecked.
test("a misspelt kobun test flag is refused with the one meant (exit 2); bun test's own flags pass", async () => {
  for (const [typo, meant] of [["--simulat=200", "--simulate"], ["--no-typechek", "--no-typecheck"], ["--notypecheck", "--no-typecheck"]]) {
    const refused = await kobunTest(typo!);
    expect(refused.code).toBe(2);
    expect(refused.out).toContain(`kobun test: unknown flag ${typo!.split("=")[0]}; did you mean ${meant}?`);
    expect(refused.out).not.toMatch(/\bpass\b/);
  }
  writeFileSync(join(project, "sum.ts"), "export function sum(a: number, b: number): number { return a + b; }\n");
  const passed = await kobunTest("--no-typecheck", "--isolate", "--timeout", "20000");   // bun's, near --simulate
  expect(passed.out).toMatch(/\b1 pass\b/);
  expect(passed.code).toBe(0);
}, 60_000);
