// The scanner behind defaults.test.ts: where src/ writes a fallback for a value that is a
// kobun.yaml setting. A fallback is `name ?? value`, `name || value`, or a parameter or
// destructuring default `name = value`, where value is a number or a constant; it is a
// setting's when `name`, less a unit suffix (Ms, S, Seconds, Bytes), is the key of a number
// in the settings schema, or one of SPELLINGS below.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Node } from "../../src/config/fields.ts";
import { sourceFiles } from "./import-graph.ts";

/** How rooms below config/ spell a setting that they name otherwise than its key. */
export const SPELLINGS: Readonly<Record<string, string>> = {
  idle: "workers.idleTimeout",
  window: "workers.batchWindow",
  freezeGrace: "peering.freezeGracePeriod",
  grace: "shutdown.gracePeriod",
  maxLine: "watching.lineLimit",
  inactivityTimeout: "watching.clientTimeout",
  resetAfter: "watching.reconnectHealthyAfter",
};

export interface Fallback {
  /** Path under src/. */
  file: string;
  line: number;
  /** The name the fallback is for, as written (`idleMs`). */
  name: string;
  /** The settings it may stand for (`workers.idleTimeout`). */
  keys: string[];
  /** The value written (`10_000`, `DEFAULT_PAGE_SIZE`, `defaults.pageSize`). */
  value: string;
  text: string;
}

/** Every key path of a schema node's leaves, by their last part ("idleTimeout" → ["workers.idleTimeout"]). */
export function keysByName(node: Node, path: string[] = [], into = new Map<string, string[]>()): Map<string, string[]> {
  if (node.kind === "field") {
    const name = path[path.length - 1]!;
    // Numbers and nulls (timings, limits; "no timeout", "retry forever"): names like "level"
    // of other keys, and "namespace" (webhooks.service's), are everywhere in src/.
    if ((typeof node.default !== "number" && node.default !== null) || name === "namespace") return into;
    into.set(name, [...(into.get(name) ?? []), path.join(".")]);
    return into;
  }
  for (const [key, child] of Object.entries(node.fields as Record<string, Node>)) keysByName(child, [...path, key], into);
  return into;
}

// What a written default looks like: a number (`60`, `10_000`, `5 * 1000`), a constant
// (`DEFAULT_BACKOFF_S`), a room's table of them (`defaults.pageSize`), or null (a setting's
// "none": no timeout, retry forever).
const VALUE = String.raw`(-?\(?\d[\d_.]*|[A-Z][A-Z\d]*_[A-Z\d_]+\b|defaults\.[\w.]+|null\b)`;
const FALLBACK = new RegExp(String.raw`\b([A-Za-z_$][\w$]*)\s*(?:\?\?=?|\|\|)\s*${VALUE}`, "g");
const PARAMETER_DEFAULT = new RegExp(String.raw`[({,]\s*([A-Za-z_$][\w$]*)\s*(?::\s*[\w$.<>[\]| ]+)?=\s*${VALUE}`, "g");

/** The fallbacks in one file's text that stand for settings. */
export function scanFallbacks(file: string, text: string, keys: ReadonlyMap<string, string[]>): Fallback[] {
  const found: Fallback[] = [];
  const lines = text.split("\n");
  for (const [index, line] of lines.entries()) {
    const code = line.replace(/\/\/.*$/, "");
    if (/^\s*\*/.test(code)) continue; // inside a doc comment
    for (const pattern of [FALLBACK, PARAMETER_DEFAULT]) {
      for (const match of code.matchAll(pattern)) {
        const [, name = "", value = ""] = match;
        const bare = name.replace(/(?:Ms|S|Seconds|Bytes)$/, "");
        const spelled = SPELLINGS[bare] ?? SPELLINGS[name];
        const settings = [...(keys.get(name) ?? keys.get(bare) ?? []), ...(spelled ? [spelled] : [])];
        if (settings.length > 0) found.push({ file, line: index + 1, name, keys: settings, value, text: line.trim() });
      }
    }
  }
  return found;
}

/** The settings fallbacks of every file of src/ but config/ (where the schema is) and the sandbox (no settings). */
export function scanSource(root: string, keys: ReadonlyMap<string, string[]>): Fallback[] {
  return sourceFiles(root)
    .filter((file) => !file.startsWith("config/") && !file.startsWith("sandbox/"))
    .flatMap((file) => scanFallbacks(file, readFileSync(join(root, file), "utf8"), keys));
}
