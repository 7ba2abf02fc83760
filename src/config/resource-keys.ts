// Which registered resource a `resources:` key names. A key may be written as the handlers
// registered the resource (its selector) or its alias, or in any form kubectl reads a resource
// name: plural, singular, kind (any case) or a short name, alone or followed by ".group" or
// ".version.group", or a selector form ("plural.group/version", "group/version/plural",
// "v1/plural"). A key must name exactly one registered resource. Config does not know the
// handlers: the runtime passes what registration knows of each (kind, singular and short names
// for the resources a handler module defines; for the others, what their selector says).

/** What registration knows of one registered resource. */
export interface KeyCandidate {
  /** The selector's text, as the handlers registered it: what the key resolves to. */
  readonly text: string;
  readonly alias?: string;
  /** undefined: the selector names no group (discovery finds it). */
  readonly group?: string;
  /** undefined: the selector names no version (the served one is taken). */
  readonly version?: string;
  readonly plural: string;
  readonly kind?: string;
  readonly singular?: string;
  readonly shortNames?: readonly string[];
}

const VERSION = /^v\d+((alpha|beta)\d+)?$/;

/** A key taken apart: the resource name with the group and version it gives (undefined: not given). */
interface KeyParts {
  name: string;
  group?: string;
  version?: string;
}

/** The ways a key can be read: "a.b.c" is name a with group b.c, or with version b of group c. */
function readings(key: string): KeyParts[] {
  const parts = key.split("/");
  if (parts.some((part) => part === "")) return [];
  if (parts.length === 3) return [{ group: parts[0]!, version: parts[1]!, name: parts[2]! }];
  if (parts.length === 2) {
    const [first, second] = parts as [string, string];
    if (VERSION.test(first)) return [{ group: "", version: first, name: second }];
    if (!VERSION.test(second)) return [];
    return readings(first).filter((r) => r.version === undefined).map((r) => ({ ...r, version: second }));
  }
  const dot = key.indexOf(".");
  if (dot < 0) return [{ name: key }];
  const name = key.slice(0, dot);
  const rest = key.slice(dot + 1);
  const found: KeyParts[] = [{ name, group: rest }];
  const versionDot = rest.indexOf(".");
  const version = versionDot < 0 ? rest : rest.slice(0, versionDot);
  if (VERSION.test(version)) found.push({ name, version, group: versionDot < 0 ? "" : rest.slice(versionDot + 1) });
  return found;
}

function namesResource(name: string, candidate: KeyCandidate): boolean {
  const lower = name.toLowerCase();
  return lower === candidate.plural.toLowerCase() || lower === candidate.singular?.toLowerCase() ||
    lower === candidate.kind?.toLowerCase() || (candidate.shortNames ?? []).includes(lower);
}

/** Whether `key` names `candidate`: its selector, its alias, or a kubectl form of its name. */
export function keyNames(key: string, candidate: KeyCandidate): boolean {
  if (key === candidate.text || key === candidate.alias) return true;
  return readings(key).some((r) =>
    namesResource(r.name, candidate) &&
    // A group or version the key gives must be the one the selector gives (a selector without
    // a group or version takes whichever discovery serves: the key cannot be checked against it).
    (r.group === undefined || r.group === candidate.group) &&
    (r.version === undefined || r.version === candidate.version));
}

/**
 * The registered resources (their selectors' texts) that `key` names: one, or none or several (a
 * problem). A selector written as registered wins; an alias does not win over a form naming
 * another resource (which was meant cannot be told): both are named.
 */
export function resourcesNamed(key: string, candidates: readonly KeyCandidate[]): string[] {
  const exact = candidates.filter((c) => key === c.text);
  if (exact.length > 0) return exact.map((c) => c.text);
  return [...new Set(candidates.filter((c) => keyNames(key, c)).map((c) => c.text))];
}
