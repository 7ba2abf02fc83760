// The docs cannot rot: every ```ts block of README.md and docs/*.md typechecks against the real
// public API (src/index.ts as "kobun"). A canary doc with a wrong field in one block goes
// through the same tsc run, so a harness that stopped checking would fail here too.

import { describe, expect, test } from "bun:test";
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { blocksOf, docBlocks, docErrors, writeBlocks } from "./blocks.ts";

const root = join(import.meta.dir, "..", "..");
const tsc = join(root, "node_modules", ".bin", "tsc");
const docs = ["README.md", ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).sort().map((f) => `docs/${f}`)];

const canary = [
  "A guide with a mistake in it.",
  "",
  "```ts",
  'import { on } from "kobun";',
  'on.create("v1/configmaps", () => {}, { id: "x", retires: 3 });',
  "```",
].join("\n");

async function typecheck(project: string): Promise<string> {
  const child = Bun.spawn([tsc, "--noEmit", "--pretty", "false", "-p", project], { cwd: project, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return stdout + stderr;
}

describe("docs", () => {
  test("every ts block of the docs typechecks against the public API, and a wrong field in one fails", async () => {
    const blocks = [...docBlocks(root, docs), ...blocksOf("canary.md", canary)];
    expect(blocks.filter((b) => !b.skipped && b.doc !== "canary.md").length).toBeGreaterThanOrEqual(25);
    const dir = join(root, ".tmp", `docs-blocks-${process.pid}`);
    const written = writeBlocks(root, dir, blocks);
    try {
      const errors = docErrors(await typecheck(dir), dir, written);
      expect(errors.filter((e) => !e.startsWith("canary.md"))).toEqual([]);
      expect(errors).toEqual([expect.stringMatching(/^canary\.md:5 TS\d+ .*'retires' does not exist/)]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  test("a no-check block must say why, and an unknown info string is refused", () => {
    expect(() => blocksOf("x.md", "```ts no-check\nfoo\n```")).toThrow(/x\.md:1: .*needs a reason/);
    expect(() => blocksOf("x.md", "```ts run\nfoo\n```")).toThrow(/unknown info string "run"/);
    expect(blocksOf("x.md", "```ts no-check a fragment of the block above\nfoo\n```")[0]?.skipped).toBe("a fragment of the block above");
  });

  test("every guide is listed in docs/README.md", () => {
    const index = Bun.file(join(root, "docs", "README.md"));
    return index.text().then((text) => {
      for (const doc of docs.filter((d) => d.startsWith("docs/") && d !== "docs/README.md")) expect(text).toContain(`(${doc.slice(5)})`);
    });
  });
});
