// Which namespaces the operator serves: globs ("team-*", "?" for one character), "!glob"
// exclusions, and the cluster-wide decision. Kopf asks for -n or -A; kobun, given
// neither, watches the whole cluster and marks the settings `defaulted` so the runtime
// can warn. Only exclusions given ("!kube-*") also means cluster-wide, filtered.

import type { NamespaceSettings } from "./settings.ts";

/** Splits mixed entries ("team-*", "!kube-*") into positive includes and exclusions. */
export function splitNamespaceEntries(entries: readonly string[]): { include: string[]; exclude: string[] } {
  const include: string[] = [];
  const exclude: string[] = [];
  for (const entry of entries) {
    if (entry.startsWith("!")) exclude.push(entry.slice(1));
    else include.push(entry);
  }
  return { include, exclude };
}

/** The namespace settings for what the user asked (from file or flags, already validated). */
export function resolveNamespaces(
  given: { include: readonly string[]; exclude: readonly string[]; allNamespaces: boolean },
): NamespaceSettings {
  const split = splitNamespaceEntries(given.include);
  const include = unique(split.include);
  const exclude = unique([...split.exclude, ...given.exclude]);
  const defaulted = !given.allNamespaces && include.length === 0 && exclude.length === 0;
  return { include, exclude, allNamespaces: given.allNamespaces || include.length === 0, defaulted };
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}

/** True if the pattern has glob characters and so must be matched against discovered namespaces. */
export function isGlob(pattern: string): boolean {
  return /[*?]/.test(pattern);
}

function globToRegExp(glob: string): RegExp {
  const body = [...glob]
    .map((char) => (char === "*" ? ".*" : char === "?" ? "." : char.replace(/[.+^${}()|[\]\\]/g, "\\$&")))
    .join("");
  return new RegExp(`^${body}$`);
}

/**
 * A predicate for namespace names: included (no includes = all) and not excluded.
 * Entries of `include` starting with "!" are treated as exclusions too.
 */
export function namespaceMatcher(
  include: readonly string[], exclude: readonly string[],
): (namespace: string) => boolean {
  const split = splitNamespaceEntries(include);
  const included = split.include.map(globToRegExp);
  const excluded = [...split.exclude, ...exclude].map(globToRegExp);
  // Asked for every watch event: loops, not Array.prototype.some (hot per event, it was compiled
  // by the JIT's last tier, ~20 ms of a 2,000-object burst's CPU; issue 15).
  return (namespace) => (included.length === 0 || anyMatches(included, namespace)) && !anyMatches(excluded, namespace);
}

function anyMatches(patterns: readonly RegExp[], namespace: string): boolean {
  for (const pattern of patterns) if (pattern.test(namespace)) return true;
  return false;
}

/** Whether the operator watches at cluster level (all namespaces, maybe minus exclusions). */
export function isClusterWide(settings: { readonly namespaces: NamespaceSettings }): boolean {
  return settings.namespaces.allNamespaces;
}

/**
 * The exact namespaces to watch when they are all literal names (minus exclusions);
 * null when cluster-wide or when globs require discovering namespaces first.
 */
export function fixedNamespaces(settings: { readonly namespaces: NamespaceSettings }): string[] | null {
  const { include, exclude } = settings.namespaces;
  if (isClusterWide(settings) || include.some(isGlob)) return null;
  const matches = namespaceMatcher([], exclude);
  return include.filter(matches);
}

/**
 * The namespaces one resource is watched in when its kobun.yaml entry gives `namespaces`
 * (either key replaces both global ones; neither: every namespace); undefined: the global ones.
 */
export function resourceNamespaces(
  given: { readonly include?: readonly string[]; readonly exclude?: readonly string[] } | undefined,
): NamespaceSettings | undefined {
  if (given === undefined) return undefined;
  const { include = [], exclude = [] } = given;
  const resolved = resolveNamespaces({ include, exclude, allNamespaces: false });
  // Asked for explicitly: no "no namespaces given" warning.
  return { ...resolved, defaulted: false };
}
