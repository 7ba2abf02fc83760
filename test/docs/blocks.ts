// The ```ts blocks of the docs, as files tsc can check against the real public API.
//
// A block's info string says what to do with it:
//   ```ts                       typechecked as a module of its own (imports from "kobun" are src/)
//   ```ts file=handlers/x.ts    the same, written at that path, so a later block can import it
//   ```ts no-check REASON       a fragment, not checked; the reason is required
// Blocks of other languages (sh, yaml, json, text) are not touched.

import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";

export interface Block {
  /** The markdown file, relative to the repository root. */
  doc: string;
  /** 1-based line of the block's first code line in `doc`. */
  line: number;
  code: string;
  /** Where the block is written, relative to its doc's directory of blocks. */
  file: string;
  /** Set for ```ts no-check: why it is not checked. */
  skipped?: string;
}

const fence = /^```(\S*)(.*)$/;

/** Every ```ts block of one markdown text; a no-check block without a reason is an error. */
export function blocksOf(doc: string, text: string): Block[] {
  const blocks: Block[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const open = lines[i]!.match(fence);
    if (!open) continue;
    const end = lines.findIndex((l, j) => j > i && l.startsWith("```"));
    if (end < 0) throw new Error(`${doc}:${i + 1}: code block never closed`);
    const [lang, rest] = [open[1]!, open[2]!.trim()];
    if (lang === "ts" || lang === "typescript") blocks.push(blockAt(doc, i + 2, lines.slice(i + 1, end).join("\n"), rest));
    i = end;
  }
  return blocks;
}

function blockAt(doc: string, line: number, code: string, info: string): Block {
  const block: Block = { doc, line, code, file: `block-${line}.ts` };
  if (info.startsWith("no-check")) {
    const reason = info.slice("no-check".length).trim();
    if (!reason) throw new Error(`${doc}:${line - 1}: \`\`\`ts no-check needs a reason after it`);
    return { ...block, skipped: reason };
  }
  const file = info.match(/^file=(\S+\.ts)$/);
  if (file) return { ...block, file: file[1]! };
  if (info) throw new Error(`${doc}:${line - 1}: unknown info string "${info}" (ts, ts file=PATH.ts or ts no-check REASON)`);
  return block;
}

/**
 * Writes the checked blocks under `dir` (one directory per doc) with a tsconfig extending the
 * repository's, so "kobun", "kobun/testing" and node_modules resolve as in the repository.
 * Returns a map from written file (absolute) to its block, for mapping errors back.
 */
export function writeBlocks(root: string, dir: string, blocks: Block[]): Map<string, Block> {
  rmSync(dir, { recursive: true, force: true });
  const written = new Map<string, Block>();
  for (const block of blocks.filter((b) => !b.skipped)) {
    const path = join(dir, block.doc.replace(/[/.]/g, "_"), block.file);
    mkdirSync(dirname(path), { recursive: true });
    // `export {}` makes every block a module: its names are its own, top-level await works.
    writeFileSync(path, `${block.code}\nexport {};\n`);
    written.set(path, block);
  }
  const config = { extends: relative(dir, join(root, "tsconfig.json")), include: ["./**/*.ts"], exclude: [] };
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(config, null, 2));
  return written;
}

/** tsc's "file(line,col): error TSnnnn: message" lines, as "doc:line TSnnnn message". */
export function docErrors(output: string, dir: string, written: Map<string, Block>): string[] {
  const found: string[] = [];
  for (const m of output.matchAll(/^(\S+?)\((\d+),\d+\): error (TS\d+): (.*)$/gm)) {
    const block = written.get(join(dir, m[1]!)) ?? written.get(m[1]!);
    const where = block ? `${block.doc}:${block.line + Number(m[2]) - 1}` : `${m[1]}:${m[2]}`;
    found.push(`${where} ${m[3]} ${m[4]}`);
  }
  return found;
}

export function docBlocks(root: string, docs: string[]): Block[] {
  return docs.flatMap((doc) => blocksOf(doc, readFileSync(join(root, doc), "utf8")));
}
