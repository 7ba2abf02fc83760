// The size contract of src/ and of the sandbox's package (packages/sandbox/src, the same limits):
// no file over 300 lines, no function over 60 unless a `// long: <why>` comment stands right
// above it, no line over 120 characters (so that a file cannot meet the first by squeezing);
// and the measurer itself can fail.

import { expect, test } from "bun:test";
import { join } from "node:path";
import { tree } from "./fixtures.ts";
import { lineCount, measureSizes, sizeViolations } from "./sizes.ts";

const ROOT = join(import.meta.dir, "../..");
const inSrc = (file: string) => file.startsWith("src/");

test("no file in src/ is over 300 lines, no function over 60 without a reason beside it, no line over 120", async () => {
  const sizes = await measureSizes(ROOT, "src", inSrc);
  expect(sizeViolations(sizes)).toEqual([]);
}, 30_000);

test("the sandbox's package holds to the same: 300 lines a file, 60 a function, 120 characters a line", async () => {
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

test("a line over 120 characters fails, wherever it is; a link may make a line long, nothing else may", async () => {
  /** `start` padded with `fill` to exactly `chars` code points. */
  const line = (start: string, chars: number, fill = "x") => start + fill.repeat(chars - [...start].length);
  const link = "https://github.com/kubernetes/kubernetes/blob/master/staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go";
  const root = project({
    "src/squeezed.ts": [
      line(`export const fits = "`, 120 - 2) + `";`, // 120: allowed
      line(`export const squeezed = { a: 1, b: 2, c: 3 }; // `, 121), // code
      line(`// `, 123), // a comment
      `// see ${link}`, // long for its link alone
      line(`// see ${link} `, [...`// see ${link} `].length + 121), // the rest is over 120 without the link
      line(`export const accents = "`, 125 - 2, "é") + `";`, // 125 code points, more UTF-16 units
    ].join("\n") + "\n",
  });
  const sizes = await measureSizes(root, "src", inSrc);
  expect(sizeViolations(sizes)).toEqual([
    `src/squeezed.ts:2: 121 characters, over 120: break it where it reads`,
    `src/squeezed.ts:3: 123 characters, over 120: break it where it reads`,
    `src/squeezed.ts:5: ${[...`// see ${link} `].length + 121} characters, over 120: break it where it reads`,
    `src/squeezed.ts:6: 125 characters, over 120: break it where it reads`,
  ]);
}, 30_000);

test("lines are counted as wc -l counts them", () => {
  expect([lineCount(""), lineCount("a"), lineCount("a\n"), lineCount("a\nb"), lineCount("a\nb\n")]).toEqual([0, 1, 1, 2, 2]);
});
