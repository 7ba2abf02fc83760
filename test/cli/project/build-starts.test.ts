// `kobun build` starts what it built once (`version`, which loads the handlers as every command
// does): a handler module that cannot load or register fails the build with the operator's own
// error and exit code, and leaves no binary behind, where it used to print "built" and leave one
// that exits 3 at every start (a Deployment in CrashLoopBackOff from a green CI build).

import { afterAll, expect, spyOn, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KOBUN_ROOT } from "../../../src/cli/project/build.ts";
import { dispatch } from "../../../src/cli.ts";

const work = mkdtempSync(join(tmpdir(), "kobun-build-starts-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function project(name: string, handler: string): string {
  const dir = join(work, name, "handlers");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "h.ts"), `import { on } from ${JSON.stringify(join(KOBUN_ROOT, "src/index.ts"))};\n${handler}\n`);
  return join(work, name);
}

async function build(dir: string, extra: string[] = []): Promise<{ code: number; said: string }> {
  const said: string[] = [];
  const spies = [console.log, console.error].map((_, i) =>
    spyOn(console, i === 0 ? "log" : "error").mockImplementation((...args: unknown[]) => void said.push(args.join(" "))));
  try {
    const code = await dispatch(["build", "--handlers", join(dir, "handlers"), "--outfile", join(dir, "dist/op"), ...extra],
      { handlersLoaded: false, manifests: [] });
    return { code, said: said.join("\n") };
  } finally {
    spies.forEach((spy) => spy.mockRestore());
  }
}

test("a registration the operator refuses fails kobun build with exit 3 and its message; no binary is left", async () => {
  const dir = project("refused", `on.create("v1/configmaps", () => {}, { id: "x", retries: 0 });`);
  const { code, said } = await build(dir);
  expect(said).toContain("handler x: retries must be a whole number ≥ 1 (attempts), not 0");
  expect(said).toContain("the built operator does not start");
  expect(code).toBe(3);
  expect(existsSync(join(dir, "dist/op"))).toBe(false);
}, 120_000);

test("a handler module that throws while loading fails it with exit 1; one that loads builds as before", async () => {
  const broken = await build(project("throws", `on.create("v1/configmaps", () => {});\nthrow new Error("no DATABASE_URL");`));
  expect(broken.said).toContain("no DATABASE_URL");
  expect(broken.code).toBe(1);
  const good = project("good", `on.create("v1/configmaps", () => {}, { id: "x" });`);
  const built = await build(good);
  expect(built.said).toContain("built ");
  expect(built.code).toBe(0);
  expect(existsSync(join(good, "dist/op"))).toBe(true);
}, 180_000);

test("--no-start-check builds a module that needs its Pod's environment to load, without starting it", async () => {
  const dir = project("pod-env", `on.create("v1/configmaps", () => {});\nif (!process.env.KOBUN_TEST_DB) throw new Error("no KOBUN_TEST_DB");`);
  const built = await build(dir, ["--no-start-check"]);
  expect(built.said).toContain("built ");
  expect(built.code).toBe(0);
  expect(existsSync(join(dir, "dist/op"))).toBe(true);
}, 120_000);
