// The size contract of src/ and of the sandbox's package (packages/sandbox/src, the same limits):
// no file over 300 lines, no function over 60 unless a `// long: <why>` comment stands right
// above it; and the measurer itself can fail.

import { expect, test } from "bun:test";
import { join } from "node:path";
import { tree } from "./fixtures.ts";
import { lineCount, measureSizes, sizeViolations } from "./sizes.ts";

const ROOT = join(import.meta.dir, "../..");
const inSrc = (file: string) => file.startsWith("src/");

test("no file in src/ is over 300 lines and no function over 60 without a reason beside it", async () => {
  const sizes = await measureSizes(ROOT, "src", inSrc);
  expect(sizeViolations(sizes)).toEqual([]);
}, 30_000);

test("no file of the sandbox's package is over 300 lines and no function over 60 without a reason beside it", async () => {
  const sizes = await measureSizes(ROOT, "packages/sandbox/src", () => true);
  expect(sizeViolations(sizes)).toEqual([]);
}, 30_000);

// The test of the test: a small project in a temp dir, with every shape a function takes.
const project = (files: Record<string, string>) => tree("kobun-sizes-", files);

/** `n` lines of statements (each one line), for bodies of a chosen length. */
const statements = (n: number) => Array.from({ length: n }, (_, i) => `  const v${i} = ${i};`).join("\n");

test("long functions of every shape are named with file, line and length; 60 lines pass; a file over 300 fails", async () => {
  const root = project({
    "src/shapes.ts": [
      `export function declared() {`, statements(59), `}`, // 61 lines
      `export function exactly() {`, statements(58), `}`, // 60 lines: allowed
      `export const arrow = () => {`, statements(59), `};`,
    ].join("\n") + "\n",
    "src/more.ts": [
      `export class Box {`, `  method() {`, statements(59), `  }`, `}`,
      `export const table = { entry: function () {`, statements(59), `} };`,
    ].join("\n") + "\n",
    "src/big.ts": Array.from({ length: 301 }, (_, i) => `export const c${i} = ${i};`).join("\n") + "\n",
  });
  const sizes = await measureSizes(root, "src", inSrc);
  expect(sizeViolations(sizes)).toEqual([
    `src/big.ts: 301 lines, over 300: split it along a line you can name`,
    `src/more.ts:2: method is 61 lines, over 60: split it, or write \`// long: <why>\` right above it`,
    `src/more.ts:64: entry is 61 lines, over 60: split it, or write \`// long: <why>\` right above it`,
    `src/shapes.ts:1: declared is 61 lines, over 60: split it, or write \`// long: <why>\` right above it`,
    `src/shapes.ts:122: arrow is 61 lines, over 60: split it, or write \`// long: <why>\` right above it`,
  ]);
}, 30_000);

test("a `// long:` reason right above a function (or in its doc block) exempts it; one a blank line away does not", async () => {
  const root = project({
    "src/reasons.ts": [
      `// long: one table the reader needs on one screen`, `export function above() {`, statements(59), `}`,
      `/**`, ` * A doc comment.`, ` * // long: the reason inside the doc block`, ` */`, `export function inDoc() {`, statements(59), `}`,
      `// long: too far away`, ``, `export function detached() {`, statements(59), `}`,
      `// long:`, `export function noReason() {`, statements(59), `}`,
    ].join("\n") + "\n",
  });
  const sizes = await measureSizes(root, "src", inSrc);
  expect(sizes.functions.map((f) => [f.name, f.reason])).toEqual([
    ["above", "one table the reader needs on one screen"],
    ["inDoc", "the reason inside the doc block"],
    ["detached", undefined],
    ["noReason", undefined],
  ]);
  expect(sizeViolations(sizes).map((v) => v.split(":")[1])).toEqual(["130", "192"]);
}, 30_000);

test("lines are counted as wc -l counts them", () => {
  expect([lineCount(""), lineCount("a"), lineCount("a\n"), lineCount("a\nb"), lineCount("a\nb\n")]).toEqual([0, 1, 1, 2, 2]);
});
