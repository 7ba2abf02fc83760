// docs/reconcile.md's first example, run as a user who copies it would run it: its two blocks
// (handlers/widget.ts and test/widget.test.ts) written into a project folder, and `bun test` there.
// The docs harness only typechecks them; this runs them.

import { expect, test } from "bun:test";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

const ROOT = join(import.meta.dir, "../..");

/** The ```ts file=<path> blocks of a markdown text, by path. */
function fileBlocks(text: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const match of text.matchAll(/^```ts file=(\S+)\n([\s\S]*?)^```$/gm)) files.set(match[1]!, match[2]!);
  return files;
}

test("the widget example of docs/reconcile.md passes its own test", async () => {
  const blocks = fileBlocks(readFileSync(join(ROOT, "docs/reconcile.md"), "utf8"));
  expect([...blocks.keys()]).toEqual(["handlers/widget.ts", "test/widget.test.ts"]);
  const project = join(ROOT, ".tmp/reconcile-blackbox", `doc-example-${process.pid}`);
  try {
    for (const [path, code] of blocks) {
      mkdirSync(dirname(join(project, path)), { recursive: true });
      writeFileSync(join(project, path), code);
    }
    const run = Bun.spawn([process.execPath, "test", "./test/widget.test.ts"], { cwd: project, stdout: "pipe", stderr: "pipe" });
    const [out, err, code] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited]);
    expect({ code, tail: `${out}${err}`.split("\n").filter((l) => /pass|fail|error/i.test(l)) }).toEqual({
      code: 0, tail: expect.arrayContaining([expect.stringMatching(/^\(pass\) a widget gets its ConfigMap/), " 1 pass", " 0 fail"]),
    });
  } finally {
    rmSync(project, { recursive: true, force: true });
  }
}, 60_000);
