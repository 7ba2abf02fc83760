// The package.json `kobun init` writes: a new one, or the one already in the directory (what
// `npm init -y` and `npm install kobun` leave) with kobun's needs merged in. Merging keeps what the
// author's file says (its name, version, license, other dependencies and scripts) and changes
// only what a kobun project cannot run with, saying what it changed.

import { existsSync } from "node:fs";
import { join } from "node:path";

export interface KobunPackage {
  version: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

export type PackageJson = Record<string, unknown>;

/** npm init's placeholder test script, which fails by design: the project's own replaces it. */
const PLACEHOLDER_TEST = /no test specified/;

export function projectPackage(name: string, kobunSpec: string, kobun: KobunPackage): PackageJson {
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
      bun: pinned(kobun.dependencies, "bun"),
      "@types/bun": pinned(kobun.devDependencies, "@types/bun"),
      typescript: pinned(kobun.devDependencies, "typescript"),
    },
    // npm 11 asks about install scripts it was not told of; bun's links its binary into bun/bin/.
    allowScripts: { bun: true },
  };
}

/**
 * `fresh` merged into the package.json already in `target`: its fields are kept, in their order,
 * with kobun's added; `changes` says what was changed of theirs (shown by init).
 */
export function mergedPackage(existing: PackageJson, fresh: PackageJson, target: string): {
  merged: PackageJson; changes: string[];
} {
  const merged: PackageJson = { ...existing, name: fresh.name };
  const changes: string[] = [];
  if (existing.name !== undefined && existing.name !== fresh.name) {
    changes.push(`name ${existing.name} → ${fresh.name}`);
  }
  merged.version ??= fresh.version;
  merged.private ??= fresh.private;
  // Handlers are ES modules (tsconfig's verbatimModuleSyntax refuses them in a CommonJS package).
  if (existing.type !== "module") {
    if (existing.type !== undefined) changes.push(`type ${existing.type} → module`);
    merged.type = "module";
  }
  // npm init's default entry point, which does not exist: an operator's are its handlers.
  if (typeof existing.main === "string" && !existsSync(join(target, existing.main))) {
    delete merged.main;
    changes.push(`main ${existing.main} removed (no such file)`);
  }
  const theirs = table(existing.scripts);
  const scripts = { ...theirs };
  for (const [script, command] of Object.entries(table(fresh.scripts))) {
    if (theirs[script] !== undefined && !(script === "test" && PLACEHOLDER_TEST.test(theirs[script]!))) continue;
    if (theirs[script] !== undefined) changes.push(`scripts.${script}: npm init's placeholder → ${command}`);
    scripts[script] = command;
  }
  merged.scripts = scripts;
  // Their versions of a dependency are kept, but kobun's spec is the one init was told or installed from.
  const freshDependencies = table(fresh.dependencies);
  merged.dependencies = { ...freshDependencies, ...table(existing.dependencies), kobun: freshDependencies.kobun! };
  merged.devDependencies = { ...table(fresh.devDependencies), ...table(existing.devDependencies) };
  if (table(existing.devDependencies).kobun !== undefined) delete (merged.devDependencies as PackageJson).kobun;
  merged.allowScripts = { ...table(fresh.allowScripts), ...table(existing.allowScripts) };
  return { merged, changes };
}

function table(value: unknown): Record<string, string> {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, string>) : {};
}
