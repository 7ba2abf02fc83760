// The house's structural figures (issue 31's closing note), read from a checkout's sources:
// per room its files, lines, lines over 120 characters and files over 300 lines; the import
// circles inside it (strongly connected components of the file-level import graph, more than
// one file); its imports of other rooms, through their face (index.ts) or into inner files; and
// the rooms it actually imports, beside what test/contracts/rooms.ts allows. The files are read
// and their imports scanned by the import contract's own scanner, so both count the same arrows.
// `bun bench/house.ts [checkout-dir]` prints a markdown table and one JSON line; the default
// checkout is the one this file sits in. src/ holds the rooms (a top-level folder, or cli.ts and
// index.ts as rooms.ts has them); each packages/<name>/src, if any, is one room `packages/<name>`.

import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, posix, resolve } from "node:path";
import { roomOf, scanImports, sourceFiles, targetRoom, type RoomTable } from "../test/contracts/import-graph.ts";
import { lineCount } from "../test/contracts/sizes.ts";

const LONG_LINE = 120;
const LONG_FILE = 300;

/** One source file: its path from the checkout's root (`src/kube/client.ts`), its room, its text. */
interface Source {
  path: string;
  room: string;
  text: string;
}

/** One import that lands in a source tree: the file it lands in (resolved where it is a file of ours). */
interface Arrow {
  from: Source;
  to: string;
  toRoom: string;
}

export interface RoomFigures {
  room: string;
  files: number;
  lines: number;
  longLines: number;
  longFiles: number;
  /** The import circles inside the room, largest first, each as its files. */
  circles: string[][];
  /** Import statements of this room's files that land in another room: at its face, or past it. */
  throughFace: number;
  intoInner: number;
  /** The rooms it imports, and (when the checkout has test/contracts/rooms.ts) how that compares with its row. */
  imports: string[];
  beyondTable?: string[];
  allowedUnused?: string[];
}

export interface HouseFigures {
  checkout: string;
  rooms: RoomFigures[];
  /** Circles whose files sit in more than one room (the import contract should make this empty). */
  crossRoomCircles: string[][];
}

/** The room of a checkout-relative path, or undefined outside src/ and packages/ * /src. */
function roomOfPath(path: string): string | undefined {
  if (path.startsWith("src/")) {
    const inSrc = path.slice("src/".length);
    return roomOf(inSrc) ?? inSrc.replace(/\.[^.]+$/, "");
  }
  const inPackage = /^packages\/([^/]+)\/src\//.exec(path);
  return inPackage ? `packages/${inPackage[1]}` : undefined;
}

/** The source trees of the checkout: src/, then each packages/<name>/src. */
function sourceRoots(checkout: string): string[] {
  const packages = join(checkout, "packages");
  const inPackages = existsSync(packages) ? readdirSync(packages).sort().map((name) => `packages/${name}/src`) : [];
  return ["src", ...inPackages].filter((root) => existsSync(join(checkout, root)));
}

function readSources(checkout: string): Source[] {
  return sourceRoots(checkout).flatMap((root) =>
    sourceFiles(join(checkout, root)).map((file) => {
      const path = `${root}/${file}`;
      return { path, room: roomOfPath(path)!, text: readFileSync(join(checkout, path), "utf8") };
    }),
  );
}

/**
 * Bare specifiers that name our own trees, from the `exports` (or `module`) of the checkout's
 * package.json and of each packages/<name>/package.json: `kobun/sandbox` → its checkout-relative file.
 */
function aliasesOf(checkout: string): Record<string, string> {
  const aliases: Record<string, string> = {};
  const dirs = [".", ...sourceRoots(checkout).slice(1).map((root) => posix.dirname(root))];
  for (const dir of dirs) {
    const manifest = join(checkout, dir, "package.json");
    if (!existsSync(manifest)) continue;
    const pkg = JSON.parse(readFileSync(manifest, "utf8"));
    const exports = typeof pkg.exports === "string" ? { ".": pkg.exports } : (pkg.exports ?? { ".": pkg.module });
    for (const [subpath, target] of Object.entries(exports as Record<string, unknown>)) {
      const file = typeof target === "string" ? target : (target as { import?: unknown } | null)?.import;
      if (typeof file !== "string" || !/\.tsx?$/.test(file)) continue;
      aliases[pkg.name + subpath.slice(1)] = posix.join(dir, file);
    }
  }
  return aliases;
}

/** Every import of ours: scanned as the contract scans, resolved to a file where one matches. */
function arrowsOf(sources: Source[], aliases: Record<string, string>): Arrow[] {
  const known = new Set(sources.map((source) => source.path));
  const arrows: Arrow[] = [];
  for (const from of sources) {
    for (const site of scanImports(from.path, from.text)) {
      const path = targetRoom(site, aliases)?.path;
      if (path === undefined) continue;
      const to = [path, `${path}.ts`, `${path}/index.ts`].find((candidate) => known.has(candidate)) ?? path;
      const toRoom = roomOfPath(to);
      if (toRoom !== undefined) arrows.push({ from, to, toRoom });
    }
  }
  return arrows;
}

/** Tarjan's strongly connected components of `graph` with more than one node, largest first. */
export function circlesOf(graph: Map<string, Set<string>>): string[][] {
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (node: string) => {
    order.set(node, order.size);
    low.set(node, order.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!order.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, order.get(next)!));
    }
    if (low.get(node) !== order.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1) circles.push(component.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!order.has(node)) visit(node);
  return circles.sort((a, b) => b.length - a.length || a[0]!.localeCompare(b[0]!));
}

const FACE = /^src\/[^/]+\.tsx?$|^src\/[^/]+\/index\.ts$|^packages\/[^/]+\/src\/index\.ts$/;

/** A room's face: its index.ts, a top-level file that is a room (cli.ts), or a file its package exports. */
function isFace(path: string, aliases: Record<string, string>): boolean {
  return FACE.test(path) || Object.values(aliases).includes(path);
}

/** The room table of the checkout's own test/contracts/rooms.ts, if it has one. */
async function tableOf(checkout: string): Promise<RoomTable | undefined> {
  const file = resolve(checkout, "test/contracts/rooms.ts");
  return existsSync(file) ? ((await import(file)) as { ROOMS: RoomTable }).ROOMS : undefined;
}

/** What every room's figures are read from. */
interface Reading {
  sources: Source[];
  arrows: Arrow[];
  circles: string[][];
  aliases: Record<string, string>;
  table: RoomTable | undefined;
}

function longLines(text: string): number {
  return text.split("\n").filter((line) => [...line].length > LONG_LINE).length;
}

function roomFigures(room: string, { sources, arrows, circles, aliases, table }: Reading): RoomFigures {
  const mine = sources.filter((source) => source.room === room);
  const lineCounts = mine.map((source) => lineCount(source.text));
  const outward = arrows.filter((arrow) => arrow.from.room === room && arrow.toRoom !== room);
  const imports = [...new Set(outward.map((arrow) => arrow.toRoom))].sort();
  const figures: RoomFigures = {
    room,
    files: mine.length,
    lines: lineCounts.reduce((sum, n) => sum + n, 0),
    longLines: mine.reduce((sum, source) => sum + longLines(source.text), 0),
    longFiles: lineCounts.filter((n) => n > LONG_FILE).length,
    circles: circles.filter((circle) => circle.every((path) => roomOfPath(path) === room)),
    throughFace: outward.filter((arrow) => isFace(arrow.to, aliases)).length,
    intoInner: outward.filter((arrow) => !isFace(arrow.to, aliases)).length,
    imports,
  };
  const allowed = table?.[room];
  if (allowed !== undefined) {
    // rooms.ts names a workspace package by the room of its face (packages/sandbox → sandbox).
    const asTable = (other: string) => other.replace(/^packages\//, "");
    figures.beyondTable = imports.filter((other) => !allowed.includes(asTable(other)) && asTable(other) !== room);
    figures.allowedUnused = allowed.filter((other) => !imports.some((mine) => asTable(mine) === other));
  }
  return figures;
}

/** All the figures of the checkout at `checkout`. */
export async function measureHouse(checkout: string): Promise<HouseFigures> {
  const sources = readSources(checkout);
  const aliases = aliasesOf(checkout);
  const arrows = arrowsOf(sources, aliases);
  const graph = new Map<string, Set<string>>(sources.map((source) => [source.path, new Set<string>()]));
  for (const arrow of arrows) if (graph.has(arrow.to)) graph.get(arrow.from.path)!.add(arrow.to);
  const circles = circlesOf(graph);
  const reading: Reading = { sources, arrows, circles, aliases, table: await tableOf(checkout) };
  const rooms = [...new Set(sources.map((source) => source.room))].sort();
  return {
    checkout,
    rooms: rooms.map((room) => roomFigures(room, reading)),
    crossRoomCircles: circles.filter((circle) => new Set(circle.map(roomOfPath)).size > 1),
  };
}

const HEAD = [
  "| room | files | lines | lines > 120 | files > 300 | circles (sizes) | out: face / inner |" +
    " imports | beyond rooms.ts | allowed, unused |",
  "|---|--:|--:|--:|--:|---|--:|---|---|---|",
];

/** One row of the table: a room's, or the totals' (which have no arrows). */
function row(r: Omit<RoomFigures, "imports"> & { imports?: string[] }): string {
  const sizes = r.circles.length ? `${r.circles.length}: ${r.circles.map((c) => c.length).join(", ")}` : "0";
  const list = (names: string[] | undefined) => (names === undefined ? "?" : names.join(", ") || "–");
  const arrows = r.imports === undefined ? ["", "", ""] : [list(r.imports), list(r.beyondTable), list(r.allowedUnused)];
  const imports = `${r.throughFace} / ${r.intoInner}`;
  const cells = [r.room, r.files, r.lines, r.longLines, r.longFiles, sizes, imports, ...arrows];
  return `| ${cells.join(" | ")} |`;
}

/** The figures as a markdown table, one row a room and a last row of totals, then the circles by name. */
export function markdown(house: HouseFigures): string {
  const all = house.rooms;
  const sum = (pick: (room: RoomFigures) => number) => all.reduce((total, room) => total + pick(room), 0);
  const totals = row({
    room: `**all ${all.length} rooms**`,
    files: sum((r) => r.files),
    lines: sum((r) => r.lines),
    longLines: sum((r) => r.longLines),
    longFiles: sum((r) => r.longFiles),
    circles: all.flatMap((r) => r.circles),
    throughFace: sum((r) => r.throughFace),
    intoInner: sum((r) => r.intoInner),
  });
  const circles = [...all.flatMap((r) => r.circles), ...house.crossRoomCircles];
  const named = circles.map((circle) => `- circle of ${circle.length}: ${circle.join(" ")}`);
  const across = house.crossRoomCircles.length ? [`Circles across rooms: ${house.crossRoomCircles.length}`] : [];
  return [`Checkout: ${house.checkout}`, "", ...HEAD, ...all.map(row), totals, "", ...across, ...named].join("\n");
}

if (import.meta.main) {
  const checkout = resolve(process.argv[2] ?? join(import.meta.dir, ".."));
  const house = await measureHouse(checkout);
  console.log(markdown(house));
  console.log();
  console.log(JSON.stringify(house));
}
