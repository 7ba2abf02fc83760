// A handler's default id is its function's name (docs/handlers.md "Results"). Bundling hoists modules
// into one scope and renames a top-level name met twice (`create_fn` in two handler modules, a handler
// called `main` beside the CLI's, or `registry` beside kobun's own) to `create_fn2`, `main2`: the binary
// would store results and progress under other ids than `kobun dev` and `kobun test` do. A real
// `kobun build`, its binary asked for the ids it registered.

import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build, KOBUN_ROOT } from "../../../src/cli/project/build.ts";

const work = mkdtempSync(join(tmpdir(), "kobun-build-chunks-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const kobun = JSON.stringify(join(KOBUN_ROOT, "src/index.ts"));
const modules: Record<string, string> = {
  "a.ts": `import { on } from ${kobun};
async function create_fn() { return { from: "a" }; }
on.create("v1/configmaps", create_fn);
const main = () => undefined;
on.update("v1/configmaps", main);
async function registry() {}
on.timer("v1/configmaps", registry, { interval: 60 });`,
  "b.ts": `import { on } from ${kobun};
async function create_fn() { return { from: "b" }; }
on.create("v1/services", create_fn);
function reconcile() {}
on.reconcile("v1/secrets", reconcile);
function text() {}
on.delete("v1/services", text);`,
  // Loaded last (modules are imported in sorted order): prints what the others registered.
  "z-ids.ts": `import { registry } from ${kobun};
const ids = [...registry.handlers.map((h) => h.id), ...registry.background.map((b) => b.id),
  ...registry.reconciles.specs.map((r) => r.id)];
console.log(JSON.stringify(ids.sort()));
process.exit(0);`,
};

test("handlers' default ids survive kobun build when two modules, the CLI or kobun share their names", async () => {
  const handlers = join(work, "handlers");
  mkdirSync(handlers);
  for (const [name, text] of Object.entries(modules)) writeFileSync(join(handlers, name), text);
  const { outfile } = await build({ handlers, outfile: join(work, "kobun"), cwd: KOBUN_ROOT });
  const proc = Bun.spawn([outfile, "version"], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  expect(err).toBe("");
  expect(code).toBe(0);
  expect(JSON.parse(out)).toEqual(["create_fn", "create_fn", "main", "reconcile", "registry", "text"]);
}, 60_000);
