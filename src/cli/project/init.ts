// `kobun init DIR`: an operator project of one's own. It writes the scaffold (scaffold/ in the
// kobun package: a typed handler with its TypeBox schema, its test with kobun/testing,
// tsconfig, kobun.yaml, a FROM scratch Dockerfile, .gitignore, README) and a package.json
// that depends on kobun by the spec it was itself installed from (a path, a git URL, a
// tarball, a version), and on the Bun kobun pins. Nothing else of kobun's tree is copied.

import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { UsageError } from "../../config/index.ts";
import { ExitCode } from "../../runtime/exits.ts";
import { readFlags, stringFlag } from "../args.ts";
import { KOBUN_ROOT } from "./build.ts";

export const INIT_HELP = `Usage: kobun init DIR [--name NAME] [--kobun SPEC]
Creates DIR (or fills it if it is empty, or holds only what "npm install kobun" left there)
with an operator project that depends on kobun:
package.json, tsconfig.json, handlers/hello.ts (a typed resource and its handler),
test/hello.test.ts (with kobun/testing), kobun.yaml, Dockerfile, .gitignore, README.md.
  --name NAME    the package name (default: DIR's name)
  --kobun SPEC   the dependency on kobun (default: the spec this kobun was installed from)
Then: cd DIR && npm install && npx kobun test`;

const SCAFFOLD = join(KOBUN_ROOT, "scaffold");
/** Scaffold files whose name npm pack would not keep as it is. */
const RENAMED: Record<string, string> = { gitignore: ".gitignore" };
/** Text files in which {{name}} stands for the project's name. */
const NAMED = /(^|\/)(README\.md|kobun\.yaml|Dockerfile)$/;
const PACKAGE_NAME = /^(@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*$/;

interface KobunPackage {
  version: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

export async function initCommand(argv: string[], cwd = process.cwd()): Promise<number> {
  const { values, positionals } = readFlags(argv, { name: { value: true }, kobun: { value: true } });
  if (positionals.length !== 1) throw new UsageError("kobun init needs one directory: kobun init my-operator");
  const target = resolve(cwd, positionals[0]!);
  const name = stringFlag(values, "name") ?? basename(target).toLowerCase();
  if (!PACKAGE_NAME.test(name) || name.length > 214) {
    throw new UsageError(
      `${JSON.stringify(name)} is not a valid npm package name ` +
        '(lowercase letters, digits, "-", "." and "_"); pass --name my-operator',
      "--name",
    );
  }
  refuseNonEmpty(target);
  const named = stringFlag(values, "kobun");
  const spec = named !== undefined ? absoluteSpec(named, cwd) : installedSpec();
  const written = scaffold(target, name, relativeSpec(spec, target));
  const shown = relative(cwd, target) || ".";
  const next = [...(shown === "." ? [] : [`cd ${shown}`]), "npm install", "npx kobun test", "npx kobun dev"];
  console.log(
    `kobun init: created ${shown} (${written.length} files: ${written.join(", ")})\n` +
      `kobun: ${relativeSpec(spec, target)}\n\nNext:\n${next.map((l) => `  ${l}`).join("\n")}`,
  );
  return ExitCode.ok;
}

function refuseNonEmpty(target: string): void {
  if (!existsSync(target)) return;
  if (!statSync(target).isDirectory()) throw new UsageError(`${target} exists and is not a directory`);
  const entries = readdirSync(target);
  if (entries.length > 0 && !onlyKobunInstalled(target, entries)) {
    const shown = entries.slice(0, 5).join(", ") + (entries.length > 5 ? `, … (${entries.length} entries)` : "");
    throw new UsageError(
      `${target} is not empty (${shown}): ` +
        "kobun init writes only into a new or empty directory, so it never overwrites a file",
    );
  }
}

/**
 * What `npm install kobun` leaves in an empty directory (node_modules, a lock, a package.json
 * naming only kobun) counts as empty: `mkdir op && cd op && npm install kobun && npx kobun init .`
 * then keeps node_modules, so the next `npm install` adds only what the scaffold adds.
 */
function onlyKobunInstalled(target: string, entries: string[]): boolean {
  const installed = ["node_modules", "package.json", "package-lock.json"];
  if (!entries.includes("package.json") || entries.some((e) => !installed.includes(e))) return false;
  try {
    const pkg = JSON.parse(readFileSync(join(target, "package.json"), "utf8")) as Record<string, unknown>;
    const tables = Object.keys(pkg);
    const names = tables.flatMap((t) =>
      typeof pkg[t] === "object" && pkg[t] !== null ? Object.keys(pkg[t] as object) : [t]);
    return tables.every((t) => t === "dependencies" || t === "devDependencies") && names.every((n) => n === "kobun");
  } catch {
    return false;
  }
}

/** Writes the scaffold and the package.json; returns the files written, relative to `target`. */
export function scaffold(target: string, name: string, kobunSpec: string): string[] {
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
  writeFileSync(join(target, "package.json"), JSON.stringify(projectPackage(name, kobunSpec, kobun), null, 2) + "\n");
  return ["package.json", ...written];
}

function projectPackage(name: string, kobunSpec: string, kobun: KobunPackage): Record<string, unknown> {
  const pinned = (table: Record<string, string> | undefined, dep: string) => {
    const version = table?.[dep];
    if (!version) throw new Error(`kobun's package.json names no version of ${dep}: is this kobun package complete?`);
    return version;
  };
  return {
    name,
    version: "0.1.0",
    private: true,
    type: "module",
    scripts: {
      dev: "kobun dev", test: "kobun test", build: "kobun build", manifests: "kobun manifests",
      typecheck: "tsc --noEmit -p .",
    },
    dependencies: { kobun: kobunSpec, typebox: pinned(kobun.dependencies, "typebox") },
    // bun: the runtime `npx kobun` runs on, pinned exactly as kobun pins it.
    devDependencies: {
      bun: pinned(kobun.devDependencies, "bun"),
      "@types/bun": pinned(kobun.devDependencies, "@types/bun"),
      typescript: pinned(kobun.devDependencies, "typescript"),
    },
    // npm runs no install script it was not told to trust; bun's puts its binary in place.
    allowScripts: { bun: true },
  };
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

/** A `file:` spec made absolute against the directory whose package.json held it. */
function absoluteSpec(spec: string, base: string): string {
  if (!spec.startsWith("file:")) return spec;
  const path = spec.slice("file:".length);
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
