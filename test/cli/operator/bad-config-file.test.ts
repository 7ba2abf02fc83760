// A kobun.yaml the YAML parser throws on (rather than listing document errors: an alias bomb)
// is a bad config file as the README's exit-code table says: exit 3, the file named, no stack.

import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const repo = join(import.meta.dir, "../../..");
const dir = mkdtempSync(join(tmpdir(), "kobun-bad-config-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Nine levels of ten aliases each: 10^9 nodes once expanded ("billion laughs"). */
function aliasBomb(): string {
  const lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
  for (let level = 1; level < 9; level++) {
    const name = String.fromCharCode(97 + level);
    const previous = String.fromCharCode(96 + level);
    lines.push(`${name}: &${name} [${Array(10).fill(`*${previous}`).join(", ")}]`);
  }
  return lines.join("\n") + "\n";
}

test("a kobun.yaml alias bomb exits 3 with a ConfigError naming the file, not a crash with a stack trace", async () => {
  writeFileSync(join(dir, "kobun.yaml"), aliasBomb());
  const child = Bun.spawn([process.execPath, join(repo, "src/cli.ts"), "run"], {
    cwd: dir, stdout: "pipe", stderr: "pipe", env: { PATH: process.env.PATH ?? "", HOME: "/nonexistent" },
  });
  const timer = setTimeout(() => child.kill(), 20_000);
  const [code, stderr] = await Promise.all([child.exited, new Response(child.stderr).text()]);
  clearTimeout(timer);
  expect(stderr).toBe(`kobun: invalid configuration:\n  ${join(dir, "kobun.yaml")}: YAML cannot be read: Excessive alias count indicates a resource exhaustion attack\n`);
  expect(code).toBe(3);
}, 30_000);
