// The typed API, proven by the compiler: the files of test/types/ must typecheck, and every
// line of test/types/fail/ marked `// error TSnnnn` must fail with exactly that error (a
// must-fail line that starts compiling, or an error nobody expected, fails the test).

import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dir, "..", "..");
const tsc = join(root, "node_modules", ".bin", "tsc");

async function typecheck(project: string): Promise<{ code: number; output: string }> {
  const child = Bun.spawn([tsc, "--noEmit", "--pretty", "false", "-p", project], { cwd: root, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, output: stdout + stderr };
}

/** "file(line,col): error TSnnnn: ..." → "file:line TSnnnn". */
function errorsOf(output: string): string[] {
  const found: string[] = [];
  for (const m of output.matchAll(/^(\S+?)\((\d+),\d+\): error (TS\d+):/gm)) found.push(`${m[1]!.split("/").pop()}:${m[2]} ${m[3]}`);
  return found.sort();
}

function expectedErrors(dir: string): string[] {
  const expected: string[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".ts"))) {
    readFileSync(join(dir, file), "utf8").split("\n").forEach((line, i) => {
      const m = line.match(/\/\/ error (TS\d+)/);
      if (m) expected.push(`${file}:${i + 1} ${m[1]}`);
    });
  }
  return expected.sort();
}

describe("types", () => {
  test("typed tokens, built-in kinds and the untyped string form all typecheck", async () => {
    const { code, output } = await typecheck("test/types");
    expect(output).toBe("");
    expect(code).toBe(0);
  }, 60_000);

  test("wrong spec fields, patch types, field paths and wire types fail to typecheck, each for its reason", async () => {
    const expected = expectedErrors(join(import.meta.dir, "fail"));
    expect(expected.length).toBeGreaterThanOrEqual(10);
    const { code, output } = await typecheck("test/types/fail");
    expect(code).not.toBe(0);
    expect(errorsOf(output)).toEqual(expected);
  }, 60_000);
});
