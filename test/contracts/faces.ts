// The faces contract: a room is imported through its face, its index.ts (or, for a room that is
// one top-level file, that file), so what a room offers is written in one place and its inner
// files can move without touching another room. Two kinds of import may name an inner file:
// a dynamic `import()` (the point of it is to load that one file late, as runtime/ loads the
// OpenTelemetry tracer only when tracing is on), and the few inner faces named with a reason.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { roomOf, scanImports, sourceFiles, targetRoom } from "./import-graph.ts";

/** An inner file that other rooms may import directly, and why it must not be in the face. */
export interface InnerFace {
  /** Root-relative path, e.g. `runtime/exits.ts`. */
  file: string;
  why: string;
}

export interface FacesVerdict {
  violations: string[];
  /** Inner faces nobody imports from another room any more: the list must shrink with the code. */
  stale: string[];
}

/** Whether `path` (root-relative) is its room's face: `<room>/index.ts`, or a top-level file. */
export function isFace(path: string): boolean {
  const parts = path.split("/");
  return parts.length === 1 || (parts.length === 2 && parts[1] === "index.ts");
}

/** Every static import of another room's inner file under `root`, but those the inner faces allow. */
export function checkFaces(root: string, inner: readonly InnerFace[], aliases: Record<string, string> = {}): FacesVerdict {
  const violations: string[] = [];
  const used = new Set<string>();
  for (const file of sourceFiles(root)) {
    const from = roomOf(file);
    for (const site of scanImports(file, readFileSync(join(root, file), "utf8"))) {
      const target = targetRoom(site, aliases);
      if (target === undefined || target.room === undefined || target.room === from || site.dynamic) continue;
      if (isFace(target.path)) continue;
      if (inner.some((face) => face.file === target.path)) {
        used.add(target.path);
        continue;
      }
      violations.push(
        `${file}:${site.line}: imports ${target.path}, an inner file of ${target.room}/ ` +
          `(${JSON.stringify(site.specifier)}): import ${target.room}/index.ts, the room's face, ` +
          `and export it there; or name it in INNER_FACES with why`,
      );
    }
  }
  const stale = inner.filter((face) => !used.has(face.file)).map((face) => `${face.file} is imported by no other room: remove it from INNER_FACES`);
  return { violations, stale };
}
