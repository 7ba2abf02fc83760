// The npm package: its exports, and the `kobun` bin that runs on Node alone. What `npm pack`
// puts in the tarball is checked by test/e2e/project.e2e.ts, on the tarball it installs.

import { expect, test } from "bun:test";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { KOBUN_ROOT } from "../../src/cli/project/build.ts";

const pkg = JSON.parse(readFileSync(join(KOBUN_ROOT, "package.json"), "utf8"));

test("kobun/testing is exported, and the kobun bin is a Node script (npx may have no Bun on PATH)", () => {
  expect(pkg.exports["./testing"]).toBe("./src/testing/index.ts");
  expect(pkg.bin.kobun).toBe("bin/kobun.js");
  const bin = join(KOBUN_ROOT, pkg.bin.kobun);
  expect(readFileSync(bin, "utf8").split("\n")[0]).toBe("#!/usr/bin/env node");
  expect(statSync(bin).mode & 0o111).not.toBe(0);
  // The runtime it starts is installed with kobun, pinned exactly.
  expect(pkg.dependencies.bun).toMatch(/^\d+\.\d+\.\d+$/);
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
