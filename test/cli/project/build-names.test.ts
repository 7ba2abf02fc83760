// A handler's default id is its function's name (docs/handlers.md "Results"), so the name must
// survive `kobun build`'s minification: an id that changed between `kobun dev` and the binary
// would store results under `status.<minified>` (which a CRD schema prunes), lose the progress the
// other stored, and two handlers renamed alike ("n", "n") would refuse to register at all.
// Built as build.ts builds (without compiling: the bundle is what the binary runs).

import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUNDLE_OPTIONS, KOBUN_ROOT } from "../../../src/cli/project/build.ts";

const work = mkdtempSync(join(tmpdir(), "kobun-build-names-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const handlers = `
import { Registry } from ${JSON.stringify(join(KOBUN_ROOT, "src/index.ts"))};
const registry = new Registry();
registry.on.create("v1/configmaps", function greet() { return { hi: 1 }; });
registry.on.create("v1/configmaps", async function count({ name }) { return { name }; });
async function census() {}
registry.on.timer("v1/secrets", census, { interval: 60 });
registry.on.reconcile("example.com/v1/widgets", async function widgets({ name }) { return void name; });
const ids = [...registry.handlers.map((h) => h.id), ...registry.background.map((b) => b.id), registry.reconciles.specs[0].id];
console.log(JSON.stringify(ids));
`;

test("handlers' default ids, their function names, survive kobun build's minification", async () => {
  const entry = join(work, "handlers.ts");
  writeFileSync(entry, handlers);
  const built = await Bun.build({
    ...BUNDLE_OPTIONS, bytecode: false, splitting: false, entrypoints: [entry], outdir: join(work, "out"),
    tsconfig: join(KOBUN_ROOT, "tsconfig.json"),
  });
  expect(built.success).toBe(true);
  const proc = Bun.spawn([process.execPath, built.outputs[0]!.path], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  expect(err).toBe("");
  expect(code).toBe(0);
  expect(JSON.parse(out)).toEqual(["greet", "count", "census", "widgets"]);
}, 60_000);
