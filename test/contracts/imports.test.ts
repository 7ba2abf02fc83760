// The import contract of src/: each room imports only the rooms DESIGN's table allows
// (test/contracts/rooms.ts holds the table); the sandbox's package (packages/sandbox) imports
// nothing of kobun, and src/ reaches it only through its entry; and the checkers themselves can fail.

import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { tree as tempTree } from "./fixtures.ts";
import { checkForbidden, checkImports, checkSealed, scanImports, sourceFiles, tableCycles, type RoomTable, type Seal } from "./import-graph.ts";
import { checkFaces } from "./faces.ts";
import { ALIASES, FORBIDDEN, INNER_FACES, KNOWN_VIOLATIONS, ROOMS } from "./rooms.ts";

const SRC = join(import.meta.dir, "../../src");
const SANDBOX_PACKAGE = join(import.meta.dir, "../../packages/sandbox");

/** The sandbox's package, its code and its tests: nothing of kobun, by path or by name. */
const SANDBOX_SEAL: Seal = {
  forbidden: ["kobun", "kobun/"],
  why: "the sandbox is the independent model kobun's client is tested against, and a package of its own: it imports nothing of kobun",
};

/** src/: into the sandbox's package by its entry only (which rooms may is the room table's, through ALIASES). */
const SRC_SEAL: Seal = {
  forbidden: ["@kobun/sandbox/"],
  outside: ["../package.json"],
  why: "src/ reaches the sandbox's package only through its entry, @kobun/sandbox (or kobun/sandbox), never into its files",
};

// The tests that read every file of src/ take under a second alone, and went past 5 s under load: bounded at 30.
const WHOLE_TREE_MS = 30_000;

test("every import in src/ follows the room table", () => {
  expect(checkImports(SRC, ROOMS, KNOWN_VIOLATIONS, ALIASES).violations).toEqual([]);
}, WHOLE_TREE_MS);

test("every known violation still exists, so the allowlist only shrinks", () => {
  expect(checkImports(SRC, ROOMS, KNOWN_VIOLATIONS, ALIASES).stale).toEqual([]);
}, WHOLE_TREE_MS);

test("every room is imported through its face (index.ts), but by a dynamic import or a named inner face", () => {
  const verdict = checkFaces(SRC, INNER_FACES, ALIASES);
  expect(verdict.violations).toEqual([]);
  expect(verdict.stale).toEqual([]);
}, WHOLE_TREE_MS);

test("forbidden imports: engines never import each other; cli audiences neither; daemons/ and reconcile/ never the loop", () => {
  expect(checkForbidden(SRC, FORBIDDEN, ALIASES)).toEqual([]);
}, WHOLE_TREE_MS);

test("the sandbox's package imports nothing of kobun, by path or by name", () => {
  expect(checkSealed(SANDBOX_PACKAGE, SANDBOX_SEAL)).toEqual([]);
}, WHOLE_TREE_MS);

test("src/ reaches the sandbox's package only through its entry", () => {
  expect(checkSealed(SRC, SRC_SEAL)).toEqual([]);
}, WHOLE_TREE_MS);

test("the room table points one way: no room reaches itself, every named room is defined", () => {
  expect(tableCycles(ROOMS)).toEqual([]);
  const undefinedRooms = Object.values(ROOMS).flat().filter((room) => !(room in ROOMS));
  expect(undefinedRooms).toEqual([]);
});

test("the scanner sees every import Bun's own scanner sees in src/ (it sees type imports too)", () => {
  const bun = new Bun.Transpiler({ loader: "ts" });
  const missed: string[] = [];
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(join(SRC, file), "utf8");
    const ours = new Set(scanImports(file, text).map((s) => s.specifier));
    for (const { path } of bun.scanImports(text)) if (!ours.has(path)) missed.push(`${file}: ${path}`);
  }
  expect(missed).toEqual([]);
}, WHOLE_TREE_MS);

// The test of the test: a small tree with wrong imports in a temp dir.
const tree = (files: Record<string, string>) => tempTree("kobun-imports-", files);

const SMALL: RoomTable = { util: [], kube: ["util"], runtime: ["kube", "util"], cli: ["runtime"], index: ["runtime"] };

test("a kube/ file importing runtime/ is named with its file, line and rule", () => {
  const root = tree({
    "kube/client.ts": `// the client\nimport { sleep } from "../util/abort.ts";\nimport { run } from "../runtime/x.ts";\n`,
    "runtime/x.ts": `export const run = 1;\n`,
    "util/abort.ts": `export const sleep = 1;\n`,
  });
  expect(checkImports(root, SMALL)).toEqual({
    violations: [`kube/client.ts:3: kube may not import runtime ("../runtime/x.ts"); kube may import: util`],
    stale: [],
  });
});

test("type-only, multi-line, re-exported and dynamic imports count; imports quoted in comments and strings do not", () => {
  const root = tree({
    "util/a.ts": [
      `import type { X } from "../kube/types.ts";`,
      `import {`,
      `  a,`,
      `  type B,`,
      `} from "../runtime/b.ts";`,
      `export * from "../cli.ts";`,
      `const lazy = () => import("../index.ts");`,
      `// import { c } from "../kube/c.ts";`,
      `/* export { d } from "../kube/d.ts"; */`,
      `const url = "https://example/";  const re = /["']/; // import("../kube/e.ts")`,
      `const text = 'import { f } from "../kube/f.ts"';`,
    ].join("\n"),
  });
  expect(checkImports(root, SMALL).violations).toEqual([
    `util/a.ts:1: util may not import kube (import type "../kube/types.ts"); util may import: nothing of ours`,
    `util/a.ts:5: util may not import runtime ("../runtime/b.ts"); util may import: nothing of ours`,
    `util/a.ts:6: util may not import cli ("../cli.ts"); util may import: nothing of ours`,
    `util/a.ts:7: util may not import index ("../index.ts"); util may import: nothing of ours`,
  ]);
});

test("cli.ts and cli/ are one room, index.ts another; an unknown room and a stale allowlist entry fail", () => {
  const root = tree({
    "cli.ts": `import { x } from "./cli/run.ts";\nimport { k } from "./kube/k.ts";\n`,
    "cli/run.ts": `import { r } from "../runtime/r.ts";\n`,
    "index.ts": `export { k } from "./kube/k.ts";\n`,
    "kube/k.ts": `export const k = 1;\n`,
    "runtime/r.ts": `export const r = 1;\n`,
    "shiny/new.ts": `export const n = 1;\n`,
  });
  const known = [
    { file: "cli.ts", imports: "kube", why: "a later step" },
    { file: "cli/run.ts", imports: "kube", why: "already gone" },
  ];
  expect(checkImports(root, SMALL, known)).toEqual({
    violations: [
      `index.ts:1: index may not import kube ("./kube/k.ts"); index may import: runtime`,
      `shiny/new.ts: room "shiny" is not in the room table: add it, with what it may import`,
    ],
    stale: ["cli/run.ts no longer imports kube: remove it from the known violations"],
  });
});

test("a bare specifier that points back into the tree (kobun) is resolved to its room", () => {
  const root = tree({ "kube/k.ts": `import { on } from "kobun";\nimport { parse } from "yaml";\n`, "index.ts": `export const on = 1;\n` });
  expect(checkImports(root, SMALL, [], { kobun: "index.ts" }).violations).toEqual([
    `kube/k.ts:1: kube may not import index ("kobun"); kube may import: util`,
  ]);
});

test("a cycle in a room table is found", () => {
  expect(tableCycles({ a: ["b"], b: ["c"], c: ["a"] })).toContain("a → b → c → a");
});

test("a forbidden import is named with its file, line and why; shared files pass; a contract naming no file fails", () => {
  const root = tree({
    "cli.ts": `import("./cli/project/build.ts");\n`,
    "cli/args.ts": `export const a = 1;\n`,
    "cli/operator/run.ts": `import { a } from "../args.ts";\nimport type { B } from "../project/build.ts";\n`,
    "cli/project/build.ts": `import { a } from "../args.ts";\n`,
  });
  const contracts = [
    { from: "cli/operator/", forbidden: ["cli/project/"], why: "the binary's commands" },
    { from: "cli/manifests/", forbidden: ["cli/project/"], why: "renamed away" },
  ];
  expect(checkForbidden(root, contracts)).toEqual([
    "cli/manifests/ names no file: fix the contract",
    `cli/operator/run.ts:2: cli/operator/ may not import cli/project/ ("../project/build.ts"): the binary's commands`,
  ]);
});

test("a sealed tree names every import out of it by path, and every forbidden name or subpath", () => {
  const pkg = tree({
    "src/server.ts": `import { a } from "./a.ts";\nimport { on } from "kobun";\nimport { run } from "kobun/testing";\nimport { parse } from "yaml";\n`,
    "src/a.ts": `import { sleep } from "../../../src/util/abort.ts";\nexport const a = 1;\n`,
    "test/a.test.ts": `import { a } from "../src/a.ts";\n`,
  });
  expect(checkSealed(pkg, SANDBOX_SEAL)).toEqual([
    `src/a.ts:1: "../../../src/util/abort.ts" leaves the tree: ${SANDBOX_SEAL.why}`,
    `src/server.ts:2: "kobun" is forbidden: ${SANDBOX_SEAL.why}`,
    `src/server.ts:3: "kobun/testing" is forbidden: ${SANDBOX_SEAL.why}`,
  ]);
  const src = tree({
    "cli.ts": `import pkg from "../package.json";\n`,
    "runtime/dev.ts": `export { startSandbox } from "@kobun/sandbox";\nimport { handle } from "@kobun/sandbox/src/server.ts";\n`,
    "testing/kit.ts": `import type { Sandbox } from "../../packages/sandbox/src/index.ts";\n`,
  });
  expect(checkSealed(src, SRC_SEAL)).toEqual([
    `runtime/dev.ts:2: "@kobun/sandbox/src/server.ts" is forbidden: ${SRC_SEAL.why}`,
    `testing/kit.ts:1: "../../packages/sandbox/src/index.ts" leaves the tree: ${SRC_SEAL.why}`,
  ]);
});

test("an import of another room's inner file is named; the face, a dynamic import, an inner face and the own room pass", () => {
  const root = tree({
    "cli.ts": [
      `import { k } from "./kube/index.ts";`, // the face
      `import { c } from "./kube/client.ts";`, // an inner file: named
      `export type { T } from "./kube/types.ts";`, // a re-export too
      `import { e } from "./runtime/exits.ts";`, // an inner face
      `const lazy = () => import("./kube/heavy.ts");`, // loaded late, by path
    ].join("\n") + "\n",
    "kube/index.ts": `export { c } from "./client.ts";\n`,
    "kube/client.ts": `import { T } from "./types.ts";\nexport const c = 1;\n`, // its own room
    "kube/types.ts": `export type T = 1;\n`,
    "kube/heavy.ts": `export const h = 1;\n`,
    "runtime/exits.ts": `export const e = 1;\n`,
  });
  const inner = [{ file: "runtime/exits.ts", why: "light" }, { file: "runtime/gone.ts", why: "no longer imported" }];
  const verdict = checkFaces(root, inner);
  expect(verdict.violations.map((v) => v.split(" (")[0])).toEqual([
    `cli.ts:2: imports kube/client.ts, an inner file of kube/`,
    `cli.ts:3: imports kube/types.ts, an inner file of kube/`,
  ]);
  expect(verdict.stale).toEqual([`runtime/gone.ts is imported by no other room: remove it from INNER_FACES`]);
});
