// `kobun init DIR`: an operator project of one's own. It writes the scaffold (scaffold/ in the
// kobun package: a typed handler with its TypeBox schema, its test with kobun/testing,
// tsconfig, kobun.yaml, a FROM scratch Dockerfile, .gitignore, README) and a package.json
// that depends on kobun by the spec it was itself installed from (a path, a git URL, a
// tarball, a version), and on the Bun kobun pins. Nothing else of kobun's tree is copied.
// A directory holding what `npm init` and `npm install kobun` leave (package.json, its lock,
// node_modules, and a .git) is filled too: its package.json is merged into (init-package.ts).

import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { UsageError } from "../../config/index.ts";
import { ExitCode } from "../../runtime/exits.ts";
import { readFlags, stringFlag } from "../args.ts";
import { KOBUN_ROOT } from "./build.ts";
import { mergedPackage, projectPackage, type KobunPackage, type PackageJson } from "./init-package.ts";

export const INIT_HELP = `Usage: kobun init DIR [--name NAME] [--kobun SPEC]
Creates DIR (or fills it if it is empty, or holds only what "npm init" and "npm install kobun"
leave there: its package.json is then merged into, keeping its name) with an operator project
that depends on kobun:
package.json, tsconfig.json, handlers/hello.ts (a typed resource and its handler),
test/hello.test.ts (with kobun/testing), kobun.yaml, Dockerfile, .gitignore, README.md.
  --name NAME    the package name (default: the existing package.json's, else DIR's name)
  --kobun SPEC   the dependency on kobun (default: the spec this kobun was installed from)
Then: cd DIR && npm install && npx kobun test`;

const SCAFFOLD = join(KOBUN_ROOT, "scaffold");
/** Scaffold files whose name npm pack would not keep as it is. */
const RENAMED: Record<string, string> = { gitignore: ".gitignore" };
/** Text files in which {{name}} stands for the project's name. */
const NAMED = /(^|\/)(README\.md|kobun\.yaml|Dockerfile)$/;
const PACKAGE_NAME = /^(@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*$/;
/** What may be in the directory already: what `npm init` and `npm install` leave, and a git repository. */
const LEFT_BY_NPM = ["node_modules", "package.json", "package-lock.json", ".git"];

export async function initCommand(argv: string[], cwd = process.cwd()): Promise<number> {
  const { values, positionals } = readFlags(argv, { name: { value: true }, kobun: { value: true } });
  if (positionals.length !== 1) throw new UsageError("kobun init needs one directory: kobun init my-operator");
  const target = resolve(cwd, positionals[0]!);
  const existing = existingPackage(target);
  const name = projectName(stringFlag(values, "name"), existing, target);
  const named = stringFlag(values, "kobun");
  const spec = named !== undefined ? absoluteSpec(named, cwd) : installedSpec();
  const { written, changes } = scaffold(target, name, relativeSpec(spec, target), existing);
  // An absolute DIR outside the current directory is shown as given, not as a climb (`../../tmp/op`).
  const climbed = relative(cwd, target) || ".";
  const shown = isAbsolute(positionals[0]!) && climbed.startsWith("..") ? target : climbed;
  const next = [...(shown === "." ? [] : [`cd ${shellWord(shown)}`]), "npm install", "npx kobun test", "npx kobun dev"];
  const merged = existing
    ? `package.json: merged into the existing one (name ${name}${changes.map((c) => `; ${c}`).join("")})\n`
    : "";
  console.log(
    `kobun init: created ${shown} (${written.length} files: ${written.join(", ")})\n${merged}` +
      `kobun: ${relativeSpec(spec, target)}\n\nNext:\n${next.map((l) => `  ${l}`).join("\n")}`,
  );
  return ExitCode.ok;
}

/**
 * The package's name: --name, else the existing package.json's, else the directory's, lowercased.
 * A name npm refuses is a usage error saying where it came from, with a name made from it to pass.
 */
function projectName(flag: string | undefined, existing: PackageJson | undefined, target: string): string {
  const existingName = typeof existing?.name === "string" ? existing.name : undefined;
  const name = flag ?? existingName ?? basename(target).toLowerCase();
  if (PACKAGE_NAME.test(name) && name.length <= 214) return name;
  const source = flag !== undefined ? `--name ${JSON.stringify(flag)}`
    : existingName !== undefined ? `the name ${JSON.stringify(existingName)} in ${join(target, "package.json")}`
    : `the directory name ${JSON.stringify(basename(target))}`;
  const made = name.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase() // Ü → u
    .replace(/[^a-z0-9._-]+/g, "-").replace(/^[-._]+|[-._]+$/g, "").slice(0, 214);
  const suggested = PACKAGE_NAME.test(made) ? made : "my-operator";
  throw new UsageError(
    `${source} is not a valid npm package name (lowercase letters, digits, "-", "." and "_"); pass --name ${suggested}`,
    "--name",
  );
}

/** `path` as one shell word, quoted when it must be, so that the printed `cd` can be pasted. */
function shellWord(path: string): string {
  return /^[\w./@%+=:,-]+$/.test(path) ? path : `'${path.replaceAll("'", "'\\''")}'`;
}

/**
 * The package.json already in `target` (undefined if none, or no directory yet). Anything there but
 * what `npm init` and `npm install kobun` leave is refused: init never overwrites a file.
 */
function existingPackage(target: string): PackageJson | undefined {
  if (!existsSync(target)) return undefined;
  if (!statSync(target).isDirectory()) throw new UsageError(`${target} exists and is not a directory`);
  const entries = readdirSync(target);
  const others = entries.filter((entry) => !LEFT_BY_NPM.includes(entry));
  if (others.length > 0) {
    const shown = others.slice(0, 5).join(", ") + (others.length > 5 ? `, … (${others.length} entries)` : "");
    throw new UsageError(
      `${target} is not empty (${shown}): kobun init writes only into a new directory or one holding ` +
        "no more than what npm init and npm install leave (package.json, package-lock.json, node_modules, .git), " +
        "so it never overwrites a file",
    );
  }
  if (!entries.includes("package.json")) return undefined;
  const path = join(target, "package.json");
  let pkg: unknown;
  try {
    pkg = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new UsageError(`${path} is not valid JSON (${(error as Error).message}): kobun init merges into it`);
  }
  if (typeof pkg !== "object" || pkg === null || Array.isArray(pkg)) {
    throw new UsageError(`${path} is not a JSON object: kobun init merges into it`);
  }
  return pkg as PackageJson;
}

/**
 * Writes the scaffold and the package.json (merged into `existing` if given); returns the files
 * written, relative to `target`, and what the merge changed of `existing`.
 */
export function scaffold(
  target: string, name: string, kobunSpec: string, existing?: PackageJson,
): { written: string[]; changes: string[] } {
  const kobun = JSON.parse(readFileSync(join(KOBUN_ROOT, "package.json"), "utf8")) as KobunPackage;
  const written: string[] = [];
  const copy = (from: string, to: string) => {
    for (const entry of readdirSync(from).sort()) {
      const source = join(from, entry);
      const path = join(to, RENAMED[entry] ?? entry);
      if (statSync(source).isDirectory()) {
        copy(source, path);
        continue;
      }
      mkdirSync(dirname(path), { recursive: true });
      const text = readFileSync(source, "utf8");
      const rel = relative(target, path);
      writeFileSync(path, NAMED.test(rel) ? text.replaceAll("{{name}}", name) : text);
      written.push(rel);
    }
  };
  copy(SCAFFOLD, target);
  const fresh = projectPackage(name, kobunSpec, kobun);
  const { merged, changes } = existing ? mergedPackage(existing, fresh, target) : { merged: fresh, changes: [] };
  writeFileSync(join(target, "package.json"), JSON.stringify(merged, null, 2) + "\n");
  return { written: ["package.json", ...written], changes };
}

/**
 * How the project that installed this kobun named it (`<dir>/node_modules/kobun` → the spec in
 * `<dir>/package.json`, npx's cache included); a path of its own for a checkout.
 */
export function installedSpec(root = KOBUN_ROOT): string {
  const modules = dirname(root);
  if (basename(modules) === "node_modules") {
    const owner = dirname(modules);
    const manifest = join(owner, "package.json");
    if (existsSync(manifest)) {
      const pkg = JSON.parse(readFileSync(manifest, "utf8")) as Record<string, Record<string, string> | undefined>;
      const spec = pkg.dependencies?.kobun ?? pkg.devDependencies?.kobun ?? pkg.optionalDependencies?.kobun;
      if (spec) return absoluteSpec(spec, owner);
    }
    const version = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as KobunPackage).version;
    return `^${version}`;
  }
  return `file:${root}`;
}

/**
 * A `file:` spec made absolute against the directory whose package.json held it (or where --kobun was
 * typed). A bare path is one too, as npm reads it (`npm install ../kobun`, `./kobun-0.1.0.tgz`, `~/kobun`):
 * written as given, it would name a place relative to the new project instead.
 */
function absoluteSpec(spec: string, base: string): string {
  const bare = /^(\.\.?(\/|$)|\/|~\/)/.test(spec);
  if (!bare && !spec.startsWith("file:")) return spec;
  const path = bare ? spec.replace(/^~\//, `${homedir()}/`) : spec.slice("file:".length);
  return `file:${isAbsolute(path) ? path : resolve(base, path)}`;
}

/** A `file:` spec as the new project's package.json must say it: relative to that project. */
export function relativeSpec(spec: string, target: string): string {
  if (!spec.startsWith("file:")) return spec;
  const path = spec.slice("file:".length);
  if (!isAbsolute(path)) return spec;
  const rel = relative(target, path);
  return `file:${rel.startsWith(".") ? rel : `./${rel}`}`;
}
