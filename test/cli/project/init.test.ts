// `kobun init DIR`: a project of one's own, depending on kobun by the spec kobun was installed
// from; only the scaffold is copied; a non-empty directory is refused.

import { afterEach, expect, spyOn, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { dispatch } from "../../../src/cli.ts";
import { initCommand, installedSpec, relativeSpec } from "../../../src/cli/project/init.ts";
import { KOBUN_ROOT } from "../../../src/cli/project/build.ts";

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "kobun-init-"));
  dirs.push(dir);
  return dir;
}
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) => statSync(join(dir, f)).isFile()).sort();
}

async function kobun(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out = spyOn(console, "log").mockImplementation(() => {});
  const err = spyOn(console, "error").mockImplementation(() => {});
  try {
    const code = await dispatch(argv, { handlersLoaded: false, manifests: [] });
    return { code, out: out.mock.calls.flat().join("\n"), err: err.mock.calls.flat().join("\n") };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

test("init writes the scaffold and a package.json, and nothing else of kobun's tree", async () => {
  const target = join(tempDir(), "my-operator");
  const { code, out } = await kobun("init", target, "--kobun", "git+https://example.com/kobun.git#v0.1.0");
  expect(code).toBe(0);
  expect(out).toContain("npm install");
  const scaffolded = filesUnder(join(KOBUN_ROOT, "scaffold")).map((f) => (f === "gitignore" ? ".gitignore" : f));
  expect(filesUnder(target)).toEqual(["package.json", ...scaffolded].sort());
  const pkg = JSON.parse(readFileSync(join(target, "package.json"), "utf8"));
  const kobunPkg = JSON.parse(readFileSync(join(KOBUN_ROOT, "package.json"), "utf8"));
  expect(pkg.name).toBe("my-operator");
  expect(pkg.dependencies.kobun).toBe("git+https://example.com/kobun.git#v0.1.0");
  expect(pkg.devDependencies.bun).toBe(kobunPkg.dependencies.bun); // the Bun kobun pins, exactly
  expect(pkg.scripts.test).toBe("kobun test");
  expect(readFileSync(join(target, "README.md"), "utf8")).toStartWith("# my-operator\n");
  expect(readFileSync(join(target, "handlers/hello.ts"), "utf8")).toContain("defineResource(");
});

test("init names an absolute DIR outside the current directory as given, not as a climb out of it", async () => {
  const target = join(tempDir(), "my-operator");
  const { code, out } = await kobun("init", target, "--kobun", "git+https://example.com/kobun.git#v0.1.0");
  expect(code).toBe(0);
  expect(out).toStartWith(`kobun init: created ${target} (`);   // was ../../tmp/kobun-init-…/my-operator
  expect(out).toContain(`\n  cd ${target}\n`);
});

test("init refuses a non-empty directory, naming what is in it, and writes nothing", async () => {
  const target = tempDir();
  writeFileSync(join(target, "notes.txt"), "mine");
  const { code, err } = await kobun("init", target);
  expect(code).toBe(2);
  expect(err).toContain(`${target} is not empty (notes.txt)`);
  expect(err).toContain("never overwrites a file");
  expect(readdirSync(target)).toEqual(["notes.txt"]);
});

test("init accepts a directory holding only what `npm install kobun` left, keeping its node_modules", async () => {
  const target = tempDir();
  mkdirSync(join(target, "node_modules/kobun"), { recursive: true });
  writeFileSync(join(target, "package-lock.json"), "{}");
  writeFileSync(join(target, "package.json"), JSON.stringify({ dependencies: { kobun: "file:../kobun-0.1.0.tgz" } }));
  const { code } = await kobun("init", target, "--kobun", "^0.1.0");
  expect(code).toBe(0);
  expect(statSync(join(target, "node_modules/kobun")).isDirectory()).toBe(true);
  expect(JSON.parse(readFileSync(join(target, "package.json"), "utf8")).dependencies.kobun).toBe("^0.1.0");
});

test("init after `npm init -y` merges into its package.json: the name, version and license kept, what kobun needs added", async () => {
  const target = join(tempDir(), "my-op");
  mkdirSync(target);
  // No network: npm's update check, funding and audit notices off (the check alone took ~4.9 s here).
  const quiet = { npm_config_update_notifier: "false", npm_config_fund: "false", npm_config_audit: "false" };
  const npmInit = Bun.spawnSync(["npm", "init", "-y"], {
    cwd: target, env: { PATH: process.env.PATH ?? "", HOME: tempDir(), ...quiet }, timeout: 20_000,
  });
  expect(npmInit.exitCode).toBe(0);
  const before = JSON.parse(readFileSync(join(target, "package.json"), "utf8"));
  expect(before.scripts.test).toContain("no test specified");
  mkdirSync(join(target, "node_modules/kobun"), { recursive: true }); // as `npm install kobun` leaves it
  const withKobun = { ...before, dependencies: { kobun: "file:../kobun-0.1.0.tgz", left: "1.0.0" } };
  writeFileSync(join(target, "package.json"), JSON.stringify(withKobun));
  const { code, out } = await kobun("init", target, "--kobun", "^0.1.0"); // the spec init is given wins
  expect(code).toBe(0);
  const pkg = JSON.parse(readFileSync(join(target, "package.json"), "utf8"));
  expect(pkg.name).toBe("my-op");
  expect([pkg.version, pkg.license, pkg.description]).toEqual([before.version, before.license, before.description]);
  expect(pkg.type).toBe("module");
  expect(pkg.main).toBeUndefined(); // npm init's index.js, which does not exist
  expect(pkg.scripts.test).toBe("kobun test");
  expect(pkg.scripts.dev).toBe("kobun dev");
  expect(pkg.dependencies).toMatchObject({ kobun: "^0.1.0", left: "1.0.0", typebox: expect.any(String) });
  expect(pkg.devDependencies.typescript).toBeDefined();
  expect(pkg.allowScripts).toEqual({ bun: true });
  expect(out).toContain("package.json: merged into the existing one (name my-op");
  if (before.type === "commonjs") expect(out).toContain("type commonjs → module");
  expect(out).toContain("main index.js removed (no such file)");
  expect(readFileSync(join(target, "README.md"), "utf8")).toStartWith("# my-op\n");
  expect(statSync(join(target, "node_modules/kobun")).isDirectory()).toBe(true);
}, 40_000); // npm init (bounded at 20 s) and kobun init, on a loaded machine

test("a merge keeps the author's own scripts and dependency versions, and --name still names the package", async () => {
  const target = tempDir();
  const theirs = { name: "theirs", scripts: { test: "bun test --bail", lint: "eslint ." }, devDependencies: { typescript: "6.0.0" } };
  writeFileSync(join(target, "package.json"), JSON.stringify(theirs));
  const { code, out } = await kobun("init", target, "--name", "ours", "--kobun", "^0.1.0");
  expect(code).toBe(0);
  const pkg = JSON.parse(readFileSync(join(target, "package.json"), "utf8"));
  expect(pkg.name).toBe("ours");
  expect(out).toContain("name theirs → ours");
  expect(pkg.scripts).toMatchObject({ test: "bun test --bail", lint: "eslint .", build: "kobun build" });
  expect(pkg.devDependencies.typescript).toBe("6.0.0");
  // A package.json that is not JSON is named, not overwritten.
  const broken = tempDir();
  writeFileSync(join(broken, "package.json"), "{ name: oops");
  const refused = await kobun("init", broken);
  expect(refused.code).toBe(2);
  expect(refused.err).toContain(`${join(broken, "package.json")} is not valid JSON`);
  expect(readFileSync(join(broken, "package.json"), "utf8")).toBe("{ name: oops");
});

test("init refuses a directory name that is no npm package name, and suggests --name made from it", async () => {
  const { code, err } = await kobun("init", join(tempDir(), "My Operator!"));
  expect(code).toBe(2);
  expect(err).toContain("--name my-operator");
  const other = await kobun("init", join(tempDir(), "Cron Jobs"));
  expect(other.err).toContain('the directory name "Cron Jobs" is not a valid npm package name');
  expect(other.err).toContain("pass --name cron-jobs");
});

test("the printed `cd DIR` can be pasted into a shell when DIR has a space or a quote in it", async () => {
  const base = tempDir();
  const spaced = await kobun("init", join(base, "My Op"), "--name", "my-op", "--kobun", "1.0.0");
  expect(spaced.code).toBe(0);
  expect(spaced.out).toContain(`\n  cd '${join(base, "My Op")}'\n`);
  const quoted = await kobun("init", join(base, "it's"), "--name", "its", "--kobun", "1.0.0");
  expect(quoted.out).toContain(`\n  cd '${join(base, "it")}'\\''s'\n`);
});

test("the kobun spec is the one the installing project's package.json names, a file: path made relative to the new project", () => {
  const base = tempDir();
  const root = join(base, "node_modules/kobun");
  mkdirSync(root, { recursive: true });
  writeFileSync(join(root, "package.json"), JSON.stringify({ version: "0.1.0" }));
  writeFileSync(join(base, "package.json"), JSON.stringify({ dependencies: { kobun: "file:../kobun-0.1.0.tgz" } }));
  const spec = installedSpec(root);
  expect(spec).toBe(`file:${join(base, "../kobun-0.1.0.tgz")}`);
  expect(relativeSpec(spec, join(base, "my-operator"))).toBe("file:../../kobun-0.1.0.tgz");
  // A git URL or a version goes through as it is; no package.json above: the version installed.
  writeFileSync(join(base, "package.json"), JSON.stringify({ devDependencies: { kobun: "github:someone/kobun#main" } }));
  expect(installedSpec(root)).toBe("github:someone/kobun#main");
  rmSync(join(base, "package.json"));
  expect(installedSpec(root)).toBe("^0.1.0");
  // A checkout (not under node_modules) is depended on by its path.
  expect(relativeSpec(installedSpec(KOBUN_ROOT), join(KOBUN_ROOT, "..", "op"))).toBe(`file:../${relative(join(KOBUN_ROOT, ".."), KOBUN_ROOT)}`);
});

test("--kobun with a path as npm install takes it (./kobun.tgz, ../kobun, no file:) is made relative to the new project", async () => {
  const base = tempDir();
  const log = spyOn(console, "log").mockImplementation(() => {});
  try {
    for (const [given, expected] of [["./kobun-0.1.0.tgz", "file:../kobun-0.1.0.tgz"], ["../kobun", "file:../../kobun"],
      [join(base, "kobun.tgz"), "file:../kobun.tgz"], ["github:acme/kobun#v1", "github:acme/kobun#v1"], ["^0.1.0", "^0.1.0"]]) {
      const project = join(base, `op-${Math.random().toString(36).slice(2, 8)}`);
      expect(await initCommand([project, "--name", "op", "--kobun", given!], base)).toBe(0);
      // was "./kobun-0.1.0.tgz" as given: relative to the new project, where npm install found nothing
      expect(JSON.parse(readFileSync(join(project, "package.json"), "utf8")).dependencies.kobun).toBe(expected);
    }
  } finally {
    log.mockRestore();
  }
});

test("init, build and test are refused by a compiled operator, which has neither the sources nor Bun", async () => {
  const err = spyOn(console, "error").mockImplementation(() => {});
  try {
    for (const command of ["init", "build", "test"]) {
      expect(await dispatch([command, "x"], { handlersLoaded: true, manifests: [] })).toBe(2);
      expect(err.mock.calls.at(-1)?.[0]).toContain(`kobun ${command} runs from the kobun package`);
    }
  } finally {
    err.mockRestore();
  }
});

test("build refuses a --target that bun build --compile does not know, before compiling anything", async () => {
  const { code, err } = await kobun("build", "--target", "linux-x64");
  expect(code).toBe(2);
  expect(err).toContain('--target "linux-x64" is not a bun compile target; e.g. bun-linux-x64');
});
