// The kubeconfig kubectl reads when KUBECONFIG names several files: their merge, in its order.
// Each cluster, user and context is taken from the first file that names it, and so is
// current-context; files that do not exist are skipped, empty ones count for nothing. A
// relative file name in an entry stays relative to the file that entry came from.

import { KubeconfigError, parsedDocument, resolveDocument, type ResolvedKubeconfig } from "./kubeconfig.ts";

type Section = "clusters" | "users" | "contexts";
const SECTIONS: Section[] = ["clusters", "users", "contexts"];

/** The files' merge, resolved to `context` (else the merged current-context). */
export async function resolveMergedKubeconfig(paths: string[], context?: string): Promise<ResolvedKubeconfig> {
  const source = paths.length === 1 ? paths[0]! : `KUBECONFIG (${paths.join(":")}, merged)`;
  const merged: Record<string, any> = { clusters: [], users: [], contexts: [] };
  const files = { clusters: new Map<string, string>(), users: new Map<string, string>() }; // entry → its file
  for (const path of paths) {
    const doc = parsedDocument(await readKubeconfig(path), path, path);
    if (doc === null || doc === undefined) continue;
    if (typeof doc !== "object") throw new KubeconfigError(`kubeconfig ${path} is not a mapping`);
    merged["current-context"] ||= doc["current-context"] || undefined;
    for (const section of SECTIONS) {
      for (const entry of Array.isArray(doc[section]) ? doc[section] : []) {
        const name = entry?.name;
        if (merged[section].some((taken: any) => taken?.name === name && name !== undefined)) continue;
        merged[section].push(entry);
        if (section !== "contexts" && typeof name === "string") files[section].set(name, path);
      }
    }
  }
  const dirOf = (section: "clusters" | "users", name: string) => {
    const file = files[section].get(name);
    return file === undefined ? undefined : process.getBuiltinModule("node:path").dirname(file);
  };
  return resolveDocument(merged, { source, context, dirOf });
}

/** A kubeconfig file's text; a file that cannot be read is a KubeconfigError naming it. */
export async function readKubeconfig(path: string): Promise<string> {
  try {
    return await Bun.file(path).text();
  } catch (error) {
    throw new KubeconfigError(`cannot read kubeconfig ${path}: ${(error as Error).message}`);
  }
}
