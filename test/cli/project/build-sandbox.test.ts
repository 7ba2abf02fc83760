// A production binary carries no sandbox (issue 31): `kobun build` leaves the sandbox's package and
// protobufjs out of the bundle, and the binary's `dev` says how to get it; `--with-sandbox`
// puts it back. Read from the bundler's metafile, built as build.ts builds (without compiling:
// the inputs are what the binary would carry).

import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUNDLE_OPTIONS, bundlePlugins, entrySource, KOBUN_ROOT, parseBuildFlags } from "../../../src/cli/project/build.ts";
import { dispatch } from "../../../src/cli.ts";

const work = mkdtempSync(join(tmpdir(), "kobun-build-sandbox-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function bundledInputs(withSandbox: boolean): Promise<string[]> {
  const entry = join(work, `entry-${withSandbox}.ts`);
  writeFileSync(entry, entrySource(KOBUN_ROOT, [join(KOBUN_ROOT, "handlers/example.ts")], [], withSandbox));
  const built = await Bun.build({
    ...BUNDLE_OPTIONS, bytecode: false, entrypoints: [entry], metafile: true, plugins: bundlePlugins(withSandbox), tsconfig: join(KOBUN_ROOT, "tsconfig.json"),
  });
  expect(built.success).toBe(true);
  return Object.keys(built.metafile!.inputs);
}

const sandboxed = (inputs: string[]) => inputs.filter((i) => i.includes("packages/sandbox/src/") || i.includes("node_modules/protobufjs/"));

test("kobun build leaves the sandbox and protobufjs out of the binary; --with-sandbox carries them", async () => {
  const [without, withIt] = await Promise.all([bundledInputs(false), bundledInputs(true)]);
  expect(sandboxed(without)).toEqual([]);
  expect(sandboxed(withIt).length).toBeGreaterThan(40);
  expect(without.some((i) => i.endsWith("src/cli/operator/dev.ts"))).toBe(true); // the command is there, to refuse
}, 60_000);

test("--with-sandbox is a build flag; without it the entry tells the binary it has no sandbox", () => {
  expect(parseBuildFlags(["--with-sandbox"], work).withSandbox).toBe(true);
  expect(parseBuildFlags([], work).withSandbox).toBeUndefined();
  expect(entrySource(KOBUN_ROOT, [], [])).toContain("sandbox: false");
  expect(entrySource(KOBUN_ROOT, [], [], true)).not.toContain("sandbox");
});

test("a binary without the sandbox refuses kobun dev with a usage error (exit 2) saying how to get it", async () => {
  const errors: string[] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => void errors.push(args.join(" "));
  try {
    expect(await dispatch(["dev", "--demo"], { handlersLoaded: true, manifests: [], sandbox: false })).toBe(2);
  } finally {
    console.error = original;
  }
  expect(errors.join("\n")).toContain("built without the sandbox: run kobun dev from the project (npx kobun dev), or build with kobun build --with-sandbox");
});
