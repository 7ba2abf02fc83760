// startOperator's options, checked before anything starts: a bad one is refused with its name, what it got and
// what it takes. Unchecked, a `logLevel` of "verbose" kept no line at all (kit.logs.until waited for nothing), a
// `timeout` of -1 started a kit whose every wait threw a RangeError, a misspelt option or flag was ignored, and a
// `crds` file that was no YAML or held no CRD was skipped (the test failed later, on a resource not served).

import { readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { parseAllDocuments } from "yaml";
import { closestMatch, RUN_FLAGS } from "../config/index.ts";
import type { Manifest } from "../runtime/index.ts";

const OPTIONS = [
  "namespace", "crds", "flags", "registry", "timeout", "logLevel", "logCapture", "memo", "clock", "toggle",
] as const;
const LEVELS = ["debug", "info", "warn", "error"];
/** Flags the kit sets itself: another value would break its promise (one namespace, no peering). */
const KITS_FLAGS: Record<string, string> = {
  namespaces: "it watches one namespace: give `namespace`",
  standalone: "it runs standalone; to test peering, run() operators against kit.kubeconfigPath, docs/peering.md",
  dev: "it runs standalone; to test peering, run() operators against kit.kubeconfigPath, docs/peering.md",
};

/** A wait's bound in ms, checked: a positive number (AbortSignal.timeout throws a bare RangeError otherwise). */
export function boundMs(what: string, timeout: unknown): number {
  if (typeof timeout === "number" && timeout > 0 && timeout !== Infinity) return timeout;
  throw new Error(`${what}({ timeout }): a positive number of ms, got ${shown(timeout)}`);
}

/** Throws at the first option startOperator cannot take as given. */
export function checkOptions(options: Record<string, unknown>): void {
  for (const key of Object.keys(options)) {
    if ((OPTIONS as readonly string[]).includes(key) || options[key] === undefined) continue;
    const near = closestMatch(key, OPTIONS);
    const hint = near ? `: did you mean ${near}?` : "";
    throw new Error(`startOperator: no option ${key}${hint} (options: ${OPTIONS.join(", ")})`);
  }
  const { timeout, logLevel, logCapture, crds, flags } = options;
  if (timeout !== undefined) boundMs("startOperator", timeout);
  if (logLevel !== undefined && logLevel !== "silent" && !LEVELS.includes(logLevel as string)) {
    throw new Error(`startOperator({ logLevel }): ${choices([...LEVELS, "silent"])}, got ${shown(logLevel)}`);
  }
  if (logCapture !== undefined && !LEVELS.includes(logCapture as string)) {
    throw new Error(`startOperator({ logCapture }): ${choices(LEVELS)}, got ${shown(logCapture)}`);
  }
  if (crds !== undefined && !(Array.isArray(crds) && crds.every((path) => typeof path === "string"))) {
    throw new Error(`startOperator({ crds }): a list of CRD file paths, got ${shown(crds)}`);
  }
  if (flags !== undefined) checkFlags(flags);
}

function checkFlags(flags: unknown): void {
  if (typeof flags !== "object" || flags === null || Array.isArray(flags)) {
    throw new Error(`startOperator({ flags }): an object of kobun run flags, got ${shown(flags)}`);
  }
  const known = RUN_FLAGS.map((flag) => flag.key as string);
  for (const [key, value] of Object.entries(flags)) {
    const why = KITS_FLAGS[key];
    const kitsOwn = value === undefined || (key === "standalone" && value === true)
      || (key === "dev" && value === false);
    if (why && !kitsOwn) throw new Error(`startOperator({ flags }): ${key} is the kit's (${why})`);
    if (known.includes(key)) continue;
    const near = closestMatch(key, known);
    throw new Error(
      `startOperator({ flags }): no flag ${key}${near ? `: did you mean ${near}?` : ""} ` +
        `(flags are kobun run's, in camelCase: webhooksUrl for --webhooks-url; ${known.join(", ")})`,
    );
  }
}

function choices(values: string[]): string {
  const quoted = values.map((value) => JSON.stringify(value));
  return `${quoted.slice(0, -1).join(", ")} or ${quoted.at(-1)}`;
}

function shown(value: unknown): string {
  return typeof value === "number" ? String(value) : (JSON.stringify(value) ?? String(value));
}

/**
 * The `crds` files, each read and holding a CRD, or an error naming the option, the file and what is wrong. A
 * directory (envtest's CRDDirectoryPaths, kubebuilder's config/crd/bases) gives its files that hold CRDs.
 */
export function readCrds(paths: string[]): Manifest[] {
  return paths.flatMap((path) => {
    if (!statSync(path, { throwIfNoEntry: false })?.isDirectory()) return [crdFile(path, true)!];
    const files = readdirSync(path).filter((name) => /\.(ya?ml|json)$/.test(name)).sort();
    const held = files.flatMap((name) => crdFile(join(path, name), false) ?? []);
    if (held.length > 0) return held;
    throw new Error(
      `startOperator({ crds }): the directory ${path} holds no file with a CustomResourceDefinition ` +
        "(its .yaml, .yml and .json files are read, not its subdirectories)",
    );
  });
}

/** One file of `crds`; one that holds no CRD is refused when named (`needed`), passed over in a directory. */
function crdFile(path: string, needed: boolean): Manifest | undefined {
  const text = readCrd(path);
  const documents = parseAllDocuments(text);
  const broken = documents.flatMap((document) => document.errors)[0];
  if (broken) throw new Error(`startOperator({ crds }): ${path} is not YAML: ${broken.message}`);
  const objects = documents.map((document) => document.toJS() as { kind?: string; metadata?: { name?: string } });
  if (objects.some((object) => object?.kind === "CustomResourceDefinition")) return { name: basename(path), text };
  if (!needed) return undefined;
  const held = objects.filter(Boolean).map((object) => `${object.kind} ${object.metadata?.name ?? "(no name)"}`);
  throw new Error(
    `startOperator({ crds }): ${path} holds no CustomResourceDefinition ` +
      `(it holds ${held.join(", ") || "nothing"}); create other objects in the test, with kit.apply`,
  );
}

/** A file of `crds`, or an error naming the option and where a relative path was looked for. */
function readCrd(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code !== "ENOENT") throw error;
    throw new Error(
      `startOperator({ crds }): no file ${JSON.stringify(path)} ` +
        `(looked for ${resolve(path)}, relative to the working directory ${process.cwd()}); ` +
        "give the path of a CRD file of your project, " +
        "or define the resource with defineResource, whose CRD is installed without a file",
      { cause: error },
    );
  }
}
