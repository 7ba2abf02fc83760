// Reads the import graph of a source tree and checks it against a room table: which room
// (first folder under the root, or a top-level file) may import which. In the spirit of Kopf's
// import-linter contracts, but small enough to read: a scanner, a resolver, a check.

import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";

/** One import of one file: where it stands and what it names. */
export interface ImportSite {
  /** Path relative to the root, with `/` separators, e.g. `kube/client.ts`. */
  file: string;
  line: number;
  specifier: string;
  /** `import type`/`export type`: erased at run time, but still an arrow between rooms. */
  typeOnly: boolean;
  /** `import("…")` or `require("…")`: loaded when called, not with the file. */
  dynamic?: boolean;
}

export interface RoomTable {
  /** room → the rooms it may import (its own room is always allowed). */
  [room: string]: readonly string[];
}

/** A known violation that a later step removes: the test fails once it no longer exists. */
export interface KnownViolation {
  file: string;
  imports: string;
  why: string;
}

export interface Verdict {
  violations: string[];
  /** Allowlist entries that match no import any more: the list must shrink with the code. */
  stale: string[];
}

/** Files directly under the root that are rooms of their own (cli.ts joins the cli/ folder; sandbox.ts is the sandbox package's face). */
const TOP_LEVEL_FILES: Record<string, string> = { "cli.ts": "cli", "index.ts": "index", "sandbox.ts": "sandbox" };

/** The room of a root-relative path, or undefined for a top-level file that is in no room. */
export function roomOf(file: string): string | undefined {
  const [first, ...rest] = file.split("/");
  return rest.length > 0 ? first : TOP_LEVEL_FILES[first!];
}

export function sourceFiles(root: string): string[] {
  return (readdirSync(root, { recursive: true, withFileTypes: true }) as import("node:fs").Dirent[])
    .filter((entry) => entry.isFile() && /\.[cm]?tsx?$/.test(entry.name) && !entry.name.endsWith(".d.ts"))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)).split(sep).join("/"))
    .sort();
}

// Static imports and re-exports start a line (`import x from`, `import { a,\n b } from`,
// `export * from`, `import "side-effect"`); the names between keyword and `from` never hold
// a quote, `=` or `;`, so `export const x = "…"` cannot match.
const STATIC = /^[ \t]*(?:import|export)\s+(type\s+)?(?:[\w$*{}\s,]+?\s+from\s*)?(["'])([^"'\n]+)\2/gm;
// Dynamic imports and requires with a literal specifier; a computed one (plugin-auth's
// `import(specifier)`) names a package chosen at run time, not a room, and is skipped.
const CALLED = /\b(?:import|require)\s*\(\s*(["'`])([^"'`\n$]+)\1\s*\)/g;

export function scanImports(file: string, text: string): ImportSite[] {
  const code = blankComments(text);
  const lineAt = (index: number) => code.slice(0, index).split("\n").length;
  const sites: ImportSite[] = [];
  for (const m of code.matchAll(STATIC)) {
    // `import { type A, type B }` erases to nothing only under verbatimModuleSyntax's rules;
    // counting it as a value import is the stricter reading, and the same arrow either way.
    sites.push({ file, line: lineAt(m.index + m[0].indexOf(m[2]!)), specifier: m[3]!, typeOnly: m[1] !== undefined });
  }
  for (const m of code.matchAll(CALLED)) sites.push({ file, line: lineAt(m.index), specifier: m[2]!, typeOnly: false, dynamic: true });
  return sites.sort((a, b) => a.line - b.line);
}

/**
 * The text with every comment replaced by spaces (newlines kept, so line numbers hold):
 * an import quoted in a comment is not an import. Strings, templates and regex literals
 * are skipped over so that `//` or a quote inside them does not start a comment.
 */
export function blankComments(text: string): string {
  const out = text.split("");
  const blank = (from: number, to: number) => {
    for (let k = from; k < to; k++) if (out[k] !== "\n") out[k] = " ";
  };
  let i = 0;
  let previous = ""; // the last significant character, to tell a regex literal from a division
  while (i < text.length) {
    const c = text[i]!;
    const next = text[i + 1];
    if (c === "/" && next === "/") {
      const end = text.indexOf("\n", i);
      const stop = end === -1 ? text.length : end;
      blank(i, stop);
      i = stop;
    } else if (c === "/" && next === "*") {
      const end = text.indexOf("*/", i + 2);
      const stop = end === -1 ? text.length : end + 2;
      blank(i, stop);
      i = stop;
    } else if (c === '"' || c === "'" || c === "`") {
      i = skipQuoted(text, i, c);
      previous = c;
    } else if (c === "/" && (previous === "" || "(,=:[!&|?{};+-*%<>~^".includes(previous))) {
      i = skipRegex(text, i);
      previous = "/";
    } else {
      if (!/\s/.test(c)) previous = c;
      i++;
    }
  }
  return out.join("");
}

/** The index just after the string or template literal that starts at `start`. */
function skipQuoted(text: string, start: number, quote: string): number {
  let i = start + 1;
  while (i < text.length && text[i] !== quote) {
    if (text[i] === "\\") i++;
    else if (quote !== "`" && text[i] === "\n") break; // unterminated: do not swallow the file
    i++;
  }
  return i + 1;
}

/** The index just after the regex literal (and its flags) that starts at `start`. */
function skipRegex(text: string, start: number): number {
  let i = start + 1;
  let inClass = false;
  while (i < text.length && text[i] !== "\n") {
    const c = text[i]!;
    if (c === "\\") i++;
    else if (c === "[") inClass = true;
    else if (c === "]") inClass = false;
    else if (c === "/" && !inClass) break;
    i++;
  }
  i++;
  while (i < text.length && /[a-z]/i.test(text[i]!)) i++;
  return i;
}

/**
 * The room an import lands in: relative specifiers resolve against the file; `aliases`
 * maps bare specifiers that point back into the tree (`kobun` → `index.ts`). Packages and
 * files outside the root (`../package.json`) are in no room: undefined.
 */
export function targetRoom(site: ImportSite, aliases: Record<string, string> = {}): { room: string | undefined; path: string } | undefined {
  const aliased = aliases[site.specifier];
  let path: string;
  if (aliased !== undefined) path = aliased;
  // Resolved against a stand-in root, so that `../` past the real root stays visible.
  else if (site.specifier.startsWith(".")) path = relative("/root", resolve("/root", dirname(site.file), site.specifier)).split(sep).join("/");
  else return undefined;
  if (path.startsWith("..")) return undefined;
  return { room: roomOf(path), path };
}

/** Checks every import of every file under `root` against `table`, minus the `known` violations. */
export function checkImports(root: string, table: RoomTable, known: readonly KnownViolation[] = [], aliases: Record<string, string> = {}): Verdict {
  const violations: string[] = [];
  const used = new Set<KnownViolation>();
  for (const file of sourceFiles(root)) {
    const from = roomOf(file);
    if (from === undefined || table[from] === undefined) {
      violations.push(`${file}: room ${JSON.stringify(from ?? file)} is not in the room table: add it, with what it may import`);
      continue;
    }
    for (const site of scanImports(file, readFileSync(join(root, file), "utf8"))) {
      const target = targetRoom(site, aliases);
      if (target === undefined || target.room === from) continue;
      const allowed = table[from]!;
      if (target.room !== undefined && allowed.includes(target.room)) continue;
      const entry = known.find((k) => k.file === file && k.imports === target.room);
      if (entry) {
        used.add(entry);
        continue;
      }
      const what = target.room === undefined ? `${target.path}, a top-level file in no room` : target.room;
      violations.push(
        `${file}:${site.line}: ${from} may not import ${what} (${site.typeOnly ? "import type " : ""}${JSON.stringify(site.specifier)}); ` +
          `${from} may import: ${allowed.length ? allowed.join(", ") : "nothing of ours"}`,
      );
    }
  }
  const stale = known.filter((k) => !used.has(k)).map((k) => `${k.file} no longer imports ${k.imports}: remove it from the known violations`);
  return { violations, stale };
}

/**
 * A forbidden contract, as Kopf's import-linter writes them, inside a room: files whose path
 * starts with `from` never import a file whose path starts with one of `forbidden` (root-relative;
 * a folder ends with `/`). Direct imports only: a shared file they import has its own contract.
 */
export interface ForbiddenImports {
  from: string;
  forbidden: readonly string[];
  why: string;
}

/** Every import a forbidden contract keeps out; and every contract path that names no file (so a rename cannot empty a contract). */
export function checkForbidden(root: string, contracts: readonly ForbiddenImports[], aliases: Record<string, string> = {}): string[] {
  const files = sourceFiles(root);
  const violations: string[] = [];
  for (const path of new Set(contracts.flatMap((c) => [c.from, ...c.forbidden]))) {
    if (!files.some((file) => file.startsWith(path))) violations.push(`${path} names no file: fix the contract`);
  }
  for (const file of files) {
    const rules = contracts.filter((c) => file.startsWith(c.from));
    if (rules.length === 0) continue;
    for (const site of scanImports(file, readFileSync(join(root, file), "utf8"))) {
      const path = targetRoom(site, aliases)?.path;
      if (path === undefined) continue;
      for (const rule of rules) {
        const hit = rule.forbidden.find((prefix) => path.startsWith(prefix));
        if (hit) violations.push(`${file}:${site.line}: ${rule.from} may not import ${hit} (${JSON.stringify(site.specifier)}): ${rule.why}`);
      }
    }
  }
  return violations;
}

/** Rooms that reach themselves through the table: arrows must point one way only. */
export function tableCycles(table: RoomTable): string[] {
  const cycles: string[] = [];
  const visit = (room: string, path: string[]) => {
    for (const next of table[room] ?? []) {
      if (next === path[0]) cycles.push([...path, next].join(" → "));
      else if (!path.includes(next)) visit(next, [...path, next]);
    }
  };
  for (const room of Object.keys(table)) visit(room, [room]);
  return cycles;
}

/**
 * A tree sealed off from its neighbours, as a workspace package is from kobun's src/ and src/
 * from the package's insides: no import by path out of `root` (but the `outside` files named),
 * and no bare specifier that `forbidden` names (a name, or a prefix ending in `/` for its subpaths).
 */
export interface Seal {
  forbidden: readonly string[];
  /** Paths out of the root that stay allowed, as the files write them from the root (`../package.json`). */
  outside?: readonly string[];
  why: string;
}

/** Every import of a file under `root` (node_modules aside) that breaks `seal`. */
export function checkSealed(root: string, seal: Seal): string[] {
  const violations: string[] = [];
  for (const file of sourceFiles(root).filter((f) => !f.split("/").includes("node_modules"))) {
    for (const site of scanImports(file, readFileSync(join(root, file), "utf8"))) {
      const spec = site.specifier;
      const path = spec.startsWith(".") ? relative("/root", resolve("/root", dirname(file), spec)).split(sep).join("/") : undefined;
      const out = path !== undefined && path.startsWith("..") && !(seal.outside ?? []).includes(path);
      const named = path === undefined && seal.forbidden.some((f) => (f.endsWith("/") ? spec.startsWith(f) : spec === f));
      if (out || named) violations.push(`${file}:${site.line}: ${JSON.stringify(spec)} ${out ? "leaves the tree" : "is forbidden"}: ${seal.why}`);
    }
  }
  return violations;
}
