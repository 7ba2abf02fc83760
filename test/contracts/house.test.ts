// bench/house.ts's figures on small trees whose circles and arrows are known.

import { expect, test } from "bun:test";
import { circlesOf, measureHouse } from "../../bench/house.ts";
import { tree } from "./fixtures.ts";

const lines = (...each: string[]) => each.map((line) => `${line}\n`).join("");

test("circles are the strongly connected components of more than one file, largest first", () => {
  const edges = { a: ["b"], b: ["a", "c"], c: ["b"], d: ["d", "e"], e: ["f"], f: ["e"], g: ["a"] };
  const graph = new Map(Object.entries(edges).map(([from, to]) => [from, new Set(to)]));
  // a⇄b and b⇄c are one circle of three; d imports itself (no circle); g only leads into one.
  expect(circlesOf(graph)).toEqual([["a", "b", "c"], ["e", "f"]]);
});

test("a checkout's circles, face and inner imports, and arrows, per room", async () => {
  const checkout = tree("kobun-house-", {
    "package.json": JSON.stringify({ name: "demo", exports: { ".": "./src/index.ts" } }),
    "src/index.ts": `export { x } from "./a/index.ts";\n`,
    "src/a/index.ts": `export { x } from "./x.ts";\n`,
    // x → y → z → x, through `import type`, `export … from` and `import`.
    "src/a/x.ts": `import type { Y } from "./y.ts";\nexport const x: Y = 1;\n`,
    "src/a/y.ts": `export { z } from "./z.ts";\nexport type Y = number;\n`,
    "src/a/z.ts": `import { x } from "./x.ts";\nexport const z = x;\n`,
    "src/a/w.ts": lines(
      'import { x } from "./x.ts";',
      '// import { w } from "./w.ts" is a comment, not an arrow',
      "export const w = x;",
    ),
    "src/b/p.ts": lines(
      'import { q } from "./q.ts";',
      'import { x } from "../a/index.ts";',
      'import { z } from "../a/z.ts";',
      "export const p = q + x + z;",
    ),
    "src/b/q.ts": `import { p } from "./p.ts";\nimport { x } from "demo";\nexport const q = () => p + x;\n`,
    "src/c/one.ts": lines(
      'import { two } from "../d/two.ts";',
      'import { sb } from "sb";',
      "export const one = () => two + sb;",
    ),
    // A workspace package is one room, imported by its name.
    "packages/sb/package.json": JSON.stringify({ name: "sb", exports: { ".": "./src/index.ts" } }),
    "packages/sb/src/index.ts": `export { sb } from "./inner.ts";\n`,
    "packages/sb/src/inner.ts": `export const sb = 1;\n`,
    "src/d/two.ts": `import { one } from "../c/one.ts";\nexport const two = () => one;\n// ${"x".repeat(120)}\n`,
  });
  const house = await measureHouse(checkout);
  const room = (name: string) => house.rooms.find((r) => r.room === name)!;
  expect(house.rooms.map((r) => r.room)).toEqual(["a", "b", "c", "d", "index", "packages/sb"]);
  expect(room("a").circles).toEqual([["src/a/x.ts", "src/a/y.ts", "src/a/z.ts"]]);
  expect(room("b").circles).toEqual([["src/b/p.ts", "src/b/q.ts"]]);
  expect(house.crossRoomCircles).toEqual([["src/c/one.ts", "src/d/two.ts"]]);
  expect(room("c")).toMatchObject({ circles: [], throughFace: 1, intoInner: 1, imports: ["d", "packages/sb"] });
  expect(room("packages/sb")).toMatchObject({ files: 2, lines: 2, circles: [], imports: [] });
  expect(room("b")).toMatchObject({ files: 2, lines: 7, throughFace: 2, intoInner: 1, imports: ["a", "index"] });
  expect(room("index")).toMatchObject({ throughFace: 1, intoInner: 0, imports: ["a"] });
  expect(room("d")).toMatchObject({ longLines: 1, longFiles: 0, intoInner: 1, imports: ["c"] });
  expect(room("a").beyondTable).toBeUndefined(); // the fixture has no rooms.ts
});
