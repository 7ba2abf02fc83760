// Measures files and functions with the TypeScript compiler's own parser (TypeScript 7's API,
// which runs the bundled tsgo beside us), so arrows, methods, accessors and function
// expressions are all seen, and a brace in a string or a regex cannot fool the count.
// `bun test/contracts/sizes.ts` prints everything over the limits, exempted or not.

import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, type Dirent } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, sep } from "node:path";
import { API } from "typescript/unstable/async";
import { SyntaxKind, type Node, type SourceFile } from "typescript/unstable/ast";

export const MAX_FILE_LINES = 300;
export const MAX_FUNCTION_LINES = 60;
/** Characters (code points) in a line: with it, a file cannot meet MAX_FILE_LINES by squeezing. */
export const MAX_LINE_CHARS = 120;

/** The one thing a line may be long for: a link, which cannot be broken and still be followed. */
const UNBREAKABLE = /https?:\/\/\S+/;

/** A function may run long with a reason written right above it: `// long: <why>`. */
const EXEMPTION = /\/\/\s*long:\s*\S/;

const FUNCTION_KINDS = new Set<SyntaxKind>([
  SyntaxKind.FunctionDeclaration,
  SyntaxKind.FunctionExpression,
  SyntaxKind.ArrowFunction,
  SyntaxKind.MethodDeclaration,
  SyntaxKind.Constructor,
  SyntaxKind.GetAccessor,
  SyntaxKind.SetAccessor,
]);

export interface LongFunction {
  /** Root-relative path with `/` separators. */
  file: string;
  /** 1-based line of the function's first token. */
  line: number;
  name: string;
  lines: number;
  /** The reason written above it, if any. */
  reason?: string;
}

export interface LongFile {
  file: string;
  lines: number;
}

export interface LongLine {
  file: string;
  /** 1-based. */
  line: number;
  chars: number;
}

export interface Sizes {
  files: LongFile[];
  functions: LongFunction[];
  lines: LongLine[];
}

/**
 * The files and functions over the limits among the `.ts` files in `root`'s folder `under`
 * that `include` accepts (root-relative paths). Only those files are parsed: a project of
 * their own, with no lib, no types and no import resolution, since sizes need syntax alone.
 */
export async function measureSizes(root: string, under: string, include: (file: string) => boolean): Promise<Sizes> {
  const files = (readdirSync(join(root, under), { recursive: true, withFileTypes: true }) as Dirent[])
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts"))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)).split(sep).join("/"))
    .filter(include)
    .sort();
  const dir = mkdtempSync(join(tmpdir(), "kobun-sizes-project-"));
  const tsconfig = join(dir, "tsconfig.json");
  const compilerOptions = { noLib: true, noResolve: true, types: [], noEmit: true, allowImportingTsExtensions: true, target: "ESNext", module: "Preserve" };
  writeFileSync(tsconfig, JSON.stringify({ compilerOptions, files: files.map((file) => join(root, file)) }));
  const api = new API({ cwd: root });
  try {
    const project = (await api.updateSnapshot({ openProjects: [tsconfig] })).getProjects()[0];
    if (project === undefined) throw new Error(`${tsconfig}: TypeScript opened no project from it`);
    const sizes: Sizes = { files: [], functions: [], lines: [] };
    for (const file of files) {
      const text = readFileSync(join(root, file), "utf8");
      const lines = lineCount(text);
      if (lines > MAX_FILE_LINES) sizes.files.push({ file, lines });
      sizes.lines.push(...longLines(file, text));
      const source = await project.program.getSourceFile(join(root, file));
      if (source === undefined) throw new Error(`${file}: TypeScript did not parse it`);
      sizes.functions.push(...longFunctions(file, source));
    }
    return sizes;
  } finally {
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Lines as `wc -l` counts them: a final newline ends the last line, it does not start one. */
export function lineCount(text: string): number {
  if (text === "") return 0;
  const newlines = text.split("\n").length - 1;
  return text.endsWith("\n") ? newlines : newlines + 1;
}

/** Lines over MAX_LINE_CHARS, but for those a link makes long (the rest of such a line must fit). */
export function longLines(file: string, text: string): LongLine[] {
  const found: LongLine[] = [];
  text.split("\n").forEach((line, i) => {
    const chars = [...line].length;
    if (chars <= MAX_LINE_CHARS) return;
    if (UNBREAKABLE.test(line) && [...line.replace(UNBREAKABLE, "")].length <= MAX_LINE_CHARS) return;
    found.push({ file, line: i + 1, chars });
  });
  return found;
}

function longFunctions(file: string, source: SourceFile): LongFunction[] {
  const found: LongFunction[] = [];
  const textLines = source.text.split("\n");
  const visit = (node: Node): void => {
    if (FUNCTION_KINDS.has(node.kind)) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.end).line;
      const lines = last - first + 1;
      if (lines > MAX_FUNCTION_LINES) {
        const reason = reasonAbove(textLines, first);
        found.push({ file, line: first + 1, name: functionName(node), lines, ...(reason ? { reason } : {}) });
      }
    }
    node.forEachChild(visit);
  };
  source.forEachChild(visit);
  return found;
}

/** The `// long: why` in the comment block directly above line `first` (0-based), or on it. */
function reasonAbove(lines: readonly string[], first: number): string | undefined {
  const own = lines[first]!.match(/\/\/\s*long:\s*(\S.*)$/);
  if (own) return own[1]!.trim();
  for (let i = first - 1; i >= 0; i--) {
    const line = lines[i]!.trim();
    if (!/^(\/\/|\/\*|\*|@)/.test(line)) return undefined;
    if (EXEMPTION.test(line)) return line.replace(/^.*?long:\s*/, "");
  }
  return undefined;
}

/** What a reader calls the function: its own name, the variable or property it is bound to, or its kind. */
function functionName(node: Node): string {
  const named = (n: Node): string | undefined => {
    const name = (n as Node & { name?: Node }).name;
    return name === undefined ? undefined : name.getText(n.getSourceFile());
  };
  if (node.kind === SyntaxKind.Constructor) return "constructor";
  const own = named(node);
  if (own !== undefined) return own;
  const parent = node.parent;
  if (parent.kind === SyntaxKind.VariableDeclaration || parent.kind === SyntaxKind.PropertyAssignment || parent.kind === SyntaxKind.PropertyDeclaration) {
    return named(parent) ?? "(anonymous)";
  }
  return node.kind === SyntaxKind.ArrowFunction ? "(arrow)" : "(function)";
}

/** The verdict lines of a measurement: what must be split or given a reason. */
export function sizeViolations(sizes: Sizes): string[] {
  return [
    ...sizes.files.map((f) => `${f.file}: ${f.lines} lines, over ${MAX_FILE_LINES}: split it along a line you can name`),
    ...sizes.functions
      .filter((f) => f.reason === undefined)
      .map((f) => `${f.file}:${f.line}: ${f.name} is ${f.lines} lines, over ${MAX_FUNCTION_LINES}: split it, or write \`// long: <why>\` right above it`),
    ...sizes.lines.map((l) => `${l.file}:${l.line}: ${l.chars} characters, over ${MAX_LINE_CHARS}: break it where it reads`),
  ];
}

if (import.meta.main) {
  const root = join(import.meta.dir, "../..");
  for (const under of ["src", "packages/sandbox/src"]) {
    const sizes = await measureSizes(root, under, () => true);
    for (const f of sizes.files) console.log(`${f.lines}\t${f.file}`);
    for (const f of sizes.functions) console.log(`${f.lines}\t${f.file}:${f.line} ${f.name}${f.reason ? `  (long: ${f.reason})` : ""}`);
  }
}
