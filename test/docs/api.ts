// The API reference (docs/api.md), generated from the TSDoc of what src/index.ts exports.
// TypeScript 7's compiler is a native binary with no JS API, so this asks tsc for the
// declarations (`--emitDeclarationOnly`, which keeps the doc comments) and reads each exported
// name's declaration and comment out of the .d.ts files, following re-exports.
//
//   bun test/docs/api.ts           rewrites docs/api.md
//   test/docs/api.test.ts          fails when docs/api.md is stale

import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const root = join(import.meta.dir, "..", "..");

interface Entry { name: string; kind: string; doc: string; declaration: string; source: string }

/** Emits the declarations of src/ into `dir`; throws with tsc's output when it fails. */
async function emitDeclarations(dir: string): Promise<void> {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const config = {
    extends: relative(dir, join(root, "tsconfig.json")),
    compilerOptions: { noEmit: false, declaration: true, emitDeclarationOnly: true, outDir: "./out", rootDir: relative(dir, join(root, "src")) },
    include: [], files: [relative(dir, join(root, "src", "index.ts"))],
  };
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(config));
  const child = Bun.spawn([join(root, "node_modules", ".bin", "tsc"), "--pretty", "false", "-p", dir], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  if (code !== 0) throw new Error(`tsc --emitDeclarationOnly failed:\n${out}${err}`);
}

/** The names a .d.ts exports through `export { … } from "…"`, with where each comes from. */
function reexports(text: string): { name: string; from: string; original: string }[] {
  const found: { name: string; from: string; original: string }[] = [];
  // An import counts too: `import type { X } from "…"; export type { X };` re-exports X.
  for (const m of text.matchAll(/(?:export|import) (?:type )?\{([^}]*)\} from "([^"]+)"/g)) {
    for (const part of m[1]!.split(",").map((p) => p.trim().replace(/^type /, "")).filter(Boolean)) {
      const [original, alias] = part.split(/\s+as\s+/);
      found.push({ name: (alias ?? original)!, original: original!, from: m[2]! });
    }
  }
  return found;
}

const DECLARATION = (name: string) => new RegExp(`^(?:export )?(?:declare )?(?:abstract )?(function|class|interface|type|const|let|enum) ${name.replace(/\$/g, "\\$")}\\b`);

/** The declaration of `name` in the .d.ts at `file`, or where its re-export leads. */
function find(file: string, name: string, depth = 0): Entry | undefined {
  if (depth > 8 || !existsSync(file)) return undefined;
  const lines = readFileSync(file, "utf8").split("\n");
  const starts = lines.map((l, i) => (DECLARATION(name).test(l) ? i : -1)).filter((i) => i >= 0);
  if (starts.length > 0) {
    const kind = lines[starts[0]!]!.match(DECLARATION(name))![1]!;
    const declaration = starts.map((i) => declarationAt(lines, i)).join("\n");
    return { name, kind, doc: docBefore(lines, starts[0]!), declaration, source: file.slice(file.lastIndexOf("/out/") + "/out/".length) };
  }
  const next = reexports(lines.join("\n")).find((r) => r.name === name);
  return next ? find(resolve(dirname(file), next.from.replace(/\.ts$/, ".d.ts")), next.original, depth + 1) : undefined;
}

/** From line `i`, up to where brackets close and the statement ends. */
function declarationAt(lines: string[], i: number): string {
  let depth = 0;
  const taken: string[] = [];
  for (let j = i; j < lines.length; j++) {
    const line = lines[j]!;
    taken.push(line);
    // A doc comment's brackets and apostrophes ("a restart's too)") are prose, not code.
    if (/^\s*(\/\*\*|\*|\/\/)/.test(line)) continue;
    for (const ch of line.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, "")) {
      if ("{([".includes(ch)) depth++;
      else if ("})]".includes(ch)) depth--;
    }
    if (depth <= 0 && /[;}]\s*$/.test(line)) break;
  }
  return taken.join("\n");
}

/** The /** … *\/ comment right above line `i`, as plain text. */
function docBefore(lines: string[], i: number): string {
  let j = i - 1;
  if (j < 0 || !lines[j]!.trim().endsWith("*/")) return "";
  while (j > 0 && !lines[j]!.trim().startsWith("/**")) j--;
  return lines.slice(j, i).join("\n").replace(/^\s*\/\*\*\s?|\s*\*\/\s*$/g, "").split("\n").map((l) => l.replace(/^\s*\* ?/, "")).join("\n").trim();
}

/** docs/api.md's text: every export of src/index.ts, in its order, with its doc and declaration. */
export async function apiReference(): Promise<string> {
  const dir = join(root, ".tmp", `api-dts-${process.pid}`);
  try {
    await emitDeclarations(dir);
    const index = join(dir, "out", "index.d.ts");
    const names = reexports(readFileSync(index, "utf8")).map((r) => r.name);
    const out = [
      "# API reference",
      "",
      "Generated from the TSDoc of what `kobun` (src/index.ts) exports, by `bun test/docs/api.ts`; do not edit",
      "(`test/docs/api.test.ts` fails when this file is stale). The guides are in [README.md](README.md).",
      "",
    ];
    const undocumented: string[] = [];
    for (const name of names) {
      const entry = find(index, name);
      if (!entry) throw new Error(`api reference: no declaration found for ${name}`);
      if (!entry.doc) undocumented.push(name);
      out.push(`## ${name}`, "", `${entry.kind} · \`src/${entry.source.replace(/\.d\.ts$/, ".ts").replace(/^out\//, "")}\``, "");
      if (entry.doc) out.push(entry.doc, "");
      out.push("```ts no-check a declaration, as tsc emits it", entry.declaration.replace(/^export (declare )?/gm, ""), "```", "");
    }
    if (undocumented.length) out.push("## Without TSDoc yet", "", undocumented.map((n) => `\`${n}\``).join(", "), "");
    return out.join("\n");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  writeFileSync(join(root, "docs", "api.md"), await apiReference());
  console.log("wrote docs/api.md");
}
