// The npm package: its exports, and the `kobun` bin that runs on Node alone. What `npm pack`
// puts in the tarball is checked by test/e2e/project.e2e.ts, on the tarball it installs.

import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { KOBUN_ROOT } from "../../src/cli/project/build.ts";

const pkg = JSON.parse(readFileSync(join(KOBUN_ROOT, "package.json"), "utf8"));

test("kobun/testing is exported, and the kobun bin is a Node script (npx may have no Bun on PATH)", () => {
  expect(pkg.exports["./testing"]).toBe("./src/testing/index.ts");
  expect(pkg.bin.kobun).toBe("bin/kobun.js");
  const bin = join(KOBUN_ROOT, pkg.bin.kobun);
  expect(readFileSync(bin, "utf8").split("\n")[0]).toBe("#!/usr/bin/env node");
  expect(statSync(bin).mode & 0o111).not.toBe(0);
  // The runtime it starts is installed with kobun, pinned exactly: the `bun` package (whose optional
  // platform package carries the binary the bin runs), at the version kobun's own checkout uses.
  expect(pkg.dependencies.bun).toMatch(/^\d+\.\d+\.\d+$/);
  expect(pkg.devDependencies.bun).toBeUndefined();
});

test("the bin runs kobun with the package-local Bun under plain Node, passing the exit status through", async () => {
  const run = async (...args: string[]) => {
    const proc = Bun.spawn(["node", join(KOBUN_ROOT, "bin/kobun.js"), ...args], { stdout: "pipe", stderr: "pipe", env: { PATH: process.env.PATH ?? "" } });
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    return { out, err, code };
  };
  const version = await run("version");
  expect(version.code).toBe(0);
  expect(version.out).toContain(`kobun ${pkg.version} (bun ${pkg.dependencies.bun})`);
  const bad = await run("no-such-command");
  expect(bad.code).toBe(2);
  expect(bad.err).toContain('unknown command "no-such-command"');
}, 20_000);

test("the package carries docs/: every relative link of the README and of the guides resolves inside it", () => {
  const packed = (path: string) =>
    ["package.json", "README.md"].includes(path) || (pkg.files as string[]).some((entry) => path === entry || path.startsWith(entry));
  expect(pkg.files).toContain("docs/");
  const pages = ["README.md", ...readdirSync(join(KOBUN_ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];
  const links = pages.flatMap((page) =>
    [...readFileSync(join(KOBUN_ROOT, page), "utf8").matchAll(/\]\(([^)\s#]+)(?:#[^)]*)?\)/g)]
      .map((m) => m[1]!)
      .filter((target) => !/^[a-z]+:/.test(target))
      .map((target) => ({ page, target: normalize(join(dirname(page), target)) })));
  expect(links.filter((l) => l.page === "README.md").map((l) => l.target)).toContain("docs/README.md");
  expect(links.filter((l) => !packed(l.target) || !existsSync(join(KOBUN_ROOT, l.target)))).toEqual([]);
});

test("kobun docs prints where the guides are and lists each one of docs/README.md's, which exist", async () => {
  const proc = Bun.spawn([process.execPath, join(KOBUN_ROOT, "src/cli.ts"), "docs"], { stdout: "pipe", stderr: "pipe" });
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  expect(code).toBe(0);
  expect(out).toContain(`guides (this version's) are in ${join(KOBUN_ROOT, "docs")}`);
  const listed = [...out.matchAll(/^ {2}(\S+\.md)$/gm)].map((m) => m[1]!);
  expect(listed).toContain(join(KOBUN_ROOT, "docs/testing.md"));
  expect(listed.length).toBeGreaterThan(10);
  for (const file of listed) expect(existsSync(file)).toBe(true);
}, 20_000);
