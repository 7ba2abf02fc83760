// Loading the operator author's handler modules and manifests when kobun runs from source
// (`bun src/cli.ts run handlers/`). A compiled binary has them built in by project/build.ts instead.

import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import type { Manifest } from "../runtime/index.ts";
import { UsageError } from "../config/index.ts";

export type { Manifest } from "../runtime/index.ts";

/** What a compiled binary carries: its handlers are already imported, its manifests embedded. */
export interface Embedded {
  handlersLoaded: boolean;
  manifests: Manifest[];
  /** false in a binary built without the sandbox (kobun build without --with-sandbox): no `dev`. */
  sandbox?: boolean;
}

/** Imports every handler module under the given files/directories; returns the YAML manifests found there. */
export async function loadHandlers(paths: string[]): Promise<Manifest[]> {
  const manifests: Manifest[] = [];
  const modules: string[] = [];
  const visit = (path: string) => {
    // A path the user typed: a usage error (exit 2), not a crash with a stack trace.
    if (!existsSync(path)) {
      throw new UsageError(`handler path ${path} does not exist (files or directories of handlers)`, path);
    }
    if (statSync(path).isDirectory()) {
      for (const name of readdirSync(path).sort()) {
        if (name === "node_modules" || name.startsWith(".")) continue;
        visit(join(path, name));
      }
    } else if (/\.ya?ml$/.test(path)) manifests.push({ name: basename(path), text: readFileSync(path, "utf8") });
    else if (/\.(ts|js|mjs)$/.test(path) && !/\.(test|spec|d)\.[mt]?[jt]s$/.test(path)) modules.push(resolve(path));
  };
  paths.forEach(visit);
  // Bun.pathToFileURL, not node:url's: a compiled binary would load node:url at start for nothing.
  for (const module of modules) await import(Bun.pathToFileURL(module).href);
  return manifests;
}

/**
 * The handler paths to load: those named, else ./handlers. Neither is a usage error: from source, nothing else
 * registers a handler, so the operator would watch nothing (most often: run from another directory).
 */
export function defaultHandlerPaths(named: string[], cwd = process.cwd()): string[] {
  if (named.length > 0) return named;
  const dir = join(cwd, "handlers");
  if (existsSync(dir)) return [dir];
  throw new UsageError(
    `no handlers to load: name their files or directories (kobun run handlers/), or run it where ./handlers is ` +
      `(there is none in ${cwd})`,
  );
}
