// `kobun test` running an operator's simulation as docs/testing.md and docs/project.md say: in a
// project (a scratch folder under the checkout, where `import "kobun"` resolves as in a project),
// a buggy operator's simulate() fails the run with exit code 1 and the whole report on the output
// (the failing schedule and how to replay it); `--simulate=N` is the budget of a call that sets
// none, and a call that sets `schedules` keeps its own.

import { afterAll, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { root, scratchDir } from "../docs-blackbox/helpers.ts";

const project = scratchDir();
afterAll(() => rmSync(project, { recursive: true, force: true }));

writeFileSync(join(project, "leak.test.ts"), `import { test } from "bun:test";
import { adopt, defineResource, Registry } from "kobun";
import { simulate } from "kobun/testing";
import Type from "typebox";

const Parts = defineResource({
  group: "cli.simulation.kobun.dev", kind: "Part", plural: "parts",
  schema: { spec: Type.Object({}), status: Type.Object({}) },
});
const registry = new Registry();
registry.on.create(Parts, async ({ name, body, api }) => {           // a generated name: a second run, a second child
  const child = { apiVersion: "v1", kind: "ConfigMap", metadata: { generateName: name + "-" }, data: {} };
  await api.create(adopt(child, { owner: body }));
}, { id: "children" });
const scenario = async (world) => { await world.apply(Parts, { metadata: { name: "p1" }, spec: {} }); };

test("the Part operator survives every crash point", async () => {
  await simulate({ registry, scenario });
}, 60_000);

test("a budget of its own", async () => {
  const quiet = new Registry();
  quiet.on.create(Parts, () => {}, { id: "nothing" });
  const { runs } = await simulate({ registry: quiet, scenario, schedules: 2 });
  console.log("own budget ran " + runs.length);
  const byFlag = await simulate({ registry: quiet, scenario });
  console.log("flag budget ran " + byFlag.runs.length);
}, 60_000);
`);

async function kobunTest(...args: string[]): Promise<{ code: number; out: string }> {
  const child = Bun.spawn([process.execPath, join(root, "src", "cli.ts"), "test", ...args], {
    cwd: project, stdout: "pipe", stderr: "pipe", env: { PATH: process.env.PATH ?? "", NO_COLOR: "1" },
  });
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, out: out + err };
}

test("kobun test: a simulation that finds a bug fails the run, its report on the output; --simulate=N budgets the others", async () => {
  const { code, out } = await kobunTest("--no-typecheck", "--simulate=3");
  expect(code).toBe(1);
  expect(out).toContain(`simulate: schedule "1/0" fails (0 other schedules passed)`);
  expect(out).toContain("  - the operator killed right after its 1st create of configmaps p1-*, then restarted");
  expect(out).toContain("  ~ configmaps default/p1-*: 2 objects where the reference has 1");
  expect(out).toContain(`replay: simulate({ ...options, seed: "1/0" })`);
  expect(out).toContain("(fail) the Part operator survives every crash point");
  expect(out).toContain("own budget ran 2");
  expect(out).toContain("flag budget ran 3");
  expect(out).toMatch(/\b1 pass\b/);
  expect(out).toMatch(/\b1 fail\b/);
}, 90_000);
