// Resolving what a person writes ("kopfexamples.kopf.dev/v1", "deployments.apps",
// "configmaps", "apps/v1/deployments") to a Resource, via the API server's discovery
// documents. Cached per group/version; a miss refreshes once before failing.

import { isNotFound } from "./errors.ts";
import type { Resource } from "./types.ts";

export type ResourceSelector = string | { group?: string; version?: string; plural: string };

type Fetch = (path: string, signal?: AbortSignal) => Promise<any>;

interface ApiResource {
  name: string;
  singularName?: string;
  namespaced: boolean;
  kind: string;
  verbs?: string[];
  shortNames?: string[];
}

/** A selector taken apart, before discovery. */
export interface ParsedSelector {
  /** undefined: any group ("" is the core group). */
  group?: string;
  version?: string;
  /** The plural (or singular, kind, short name) as written. */
  name: string;
  /** The selector as written, for messages. */
  text: string;
}

const VERSION = /^v\d+((alpha|beta)\d+)?$/;

export class Discovery {
  /** group name → its versions, the preferred first ("" → "v1" first), as kubectl searches them. */
  private groups?: Promise<Map<string, string[]>>;
  /** "group/version" → its resources. */
  private readonly resources = new Map<string, Promise<ApiResource[]>>();

  constructor(private readonly fetchJson: Fetch) {}

  async resolve(selector: ResourceSelector, signal?: AbortSignal): Promise<Resource> {
    const wanted = parseSelector(selector);
    if (wanted.group === undefined) return this.searchAllGroups(wanted, signal);
    const group = wanted.group;
    for (const fresh of [false, true]) {
      const versions = wanted.version ? [wanted.version] : ((await this.groupMap(fresh, signal)).get(group) ?? []);
      const found = await this.firstServing(group, versions, wanted.name, fresh, signal);
      if (found) return found;
    }
    throw new Error(
      `unknown resource ${JSON.stringify(wanted.text)}: the API server serves no such resource ` +
        "(check the name, group and version, or that the CRD is installed)",
    );
  }

  /** Forgets everything: after CRDs change. */
  invalidate(): void {
    this.groups = undefined;
    this.resources.clear();
  }

  private async searchAllGroups(wanted: ParsedSelector, signal?: AbortSignal): Promise<Resource> {
    for (const fresh of [false, true]) {
      const groups = await this.groupMap(fresh, signal);
      const found: Resource[] = [];
      const search = (others: boolean) => Promise.all(
        [...groups].map(async ([group, versions]) => {
          const some = others ? versions.slice(1) : versions.slice(0, 1);
          const match = await this.firstServing(group, some, wanted.name, fresh, signal, !others);
          if (match) found.push(match);
        }),
      );
      // Each group's preferred version first; its others only when no group's preferred one serves the
      // name (as kubectl falls back), so a plain "pods" costs no request per other version.
      await search(false);
      if (found.length === 0) await search(true);
      // Exact plural matches win over singular/kind/short names; the core group wins ties, as in kubectl.
      const exact = found.filter((r) => r.plural === wanted.name);
      const candidates = exact.length ? exact : found;
      if (candidates.length === 1) return candidates[0]!;
      const core = candidates.filter((r) => r.group === "");
      if (core.length === 1) return core[0]!;
      if (candidates.length > 1) {
        const names = candidates.map((r) => `${r.plural}.${r.group}/${r.version}`).sort().join(", ");
        const example = `${candidates[0]!.plural}.${candidates[0]!.group}`;
        const ambiguous = `resource ${JSON.stringify(wanted.text)} is ambiguous: it matches ${names}`;
        throw new Error(`${ambiguous}; name the group, e.g. "${example}"`);
      }
    }
    throw new Error(
      `unknown resource ${JSON.stringify(wanted.text)}: no API group serves it ` +
        "(check the name, or that the CRD is installed)",
    );
  }

  /**
   * The resource named in the first of `versions` (the preferred first) that serves it: a resource
   * served only in a group's other version is found there, as kubectl finds it.
   */
  private async firstServing(
    group: string, versions: readonly string[], name: string, fresh: boolean, signal?: AbortSignal,
    preferredFirst = true,
  ): Promise<Resource | undefined> {
    for (const [i, version] of versions.entries()) {
      // A version the group does not prefer that fails to answer (an aggregated API down) serves nothing here;
      // the preferred one's failure is the caller's, as it was before versions were searched.
      const loading = this.resourceList(group, version, fresh, signal);
      const list = i === 0 && preferredFirst ? await loading : await loading.catch((): ApiResource[] => []);
      const found = pick(group, version, list, name);
      if (found) return found;
    }
    return undefined;
  }

  private groupMap(fresh: boolean, signal?: AbortSignal): Promise<Map<string, string[]>> {
    if (fresh || !this.groups) {
      const fetched = Promise.all([this.fetchJson("/api", signal), this.fetchJson("/apis", signal)]);
      const loading = fetched.then(([core, apis]) => {
        const map = new Map<string, string[]>();
        const coreVersions: string[] = core?.versions ?? [];
        map.set("", coreVersions.includes("v1") ? ["v1", ...coreVersions.filter((v) => v !== "v1")] : coreVersions);
        if (!coreVersions.length) map.set("", ["v1"]);
        for (const g of apis?.groups ?? []) {
          const listed: string[] = (g.versions ?? []).map((v: { version?: string }) => v.version).filter(Boolean);
          const preferred: string | undefined = g.preferredVersion?.version ?? listed[0];
          if (g.name && preferred) map.set(g.name, [preferred, ...listed.filter((v) => v !== preferred)]);
        }
        return map;
      });
      loading.catch(() => {
        if (this.groups === loading) this.groups = undefined;
      });
      this.groups = loading;
    }
    return this.groups;
  }

  private resourceList(group: string, version: string, fresh: boolean, signal?: AbortSignal): Promise<ApiResource[]> {
    const key = `${group}/${version}`;
    let list = this.resources.get(key);
    if (fresh || !list) {
      const path = group ? `/apis/${group}/${version}` : `/api/${version}`;
      const loading: Promise<ApiResource[]> = this.fetchJson(path, signal).then(
        (doc) => doc?.resources ?? [],
        (error) => {
          if (isNotFound(error)) return []; // group/version not served
          throw error;
        },
      );
      loading.catch(() => {
        if (this.resources.get(key) === loading) this.resources.delete(key);
      });
      this.resources.set(key, loading);
      list = loading;
    }
    return list;
  }
}

function pick(group: string, version: string, list: ApiResource[], name: string): Resource | undefined {
  const lower = name.toLowerCase();
  const main = list.filter((r) => !r.name.includes("/"));
  const entry =
    main.find((r) => r.name === name) ??
    main.find((r) =>
      r.singularName === lower || r.kind.toLowerCase() === lower || (r.shortNames ?? []).includes(lower));
  if (!entry) return undefined;
  return {
    group,
    version,
    plural: entry.name,
    kind: entry.kind,
    ...(entry.singularName ? { singular: entry.singularName } : {}),
    ...(entry.shortNames?.length ? { shortNames: entry.shortNames } : {}),
    namespaced: entry.namespaced,
    statusSubresource: list.some((r) => r.name === `${entry.name}/status`),
    verbs: entry.verbs,
  };
}

export function parseSelector(selector: ResourceSelector): ParsedSelector {
  if (typeof selector !== "string") {
    const version = selector.version ? `/${selector.version}` : "";
    const text = [selector.plural, selector.group].filter(Boolean).join(".") + version;
    if (!selector.plural) throw new Error(`resource selector ${JSON.stringify(selector)} names no plural`);
    return { group: selector.group, version: selector.version, name: selector.plural, text };
  }
  const text = selector.trim();
  const parts = text.split("/");
  const bad = () => new Error(
    `cannot read resource selector ${JSON.stringify(selector)}: ` +
      'use "plural", "plural.group", "plural.group/version", "v1/plural" or "group/version/plural"',
  );
  if (parts.some((p) => !p)) throw bad();
  if (parts.length === 1) {
    const dot = text.indexOf(".");
    return dot < 0 ? { name: text, text } : { name: text.slice(0, dot), group: text.slice(dot + 1), text };
  }
  if (parts.length === 2) {
    const [a, b] = parts as [string, string];
    if (VERSION.test(a) && !a.includes(".")) return { group: "", version: a, name: b, text }; // v1/configmaps
    if (VERSION.test(b)) {
      const dot = a.indexOf(".");
      if (dot < 0) return { group: "", version: b, name: a, text };
      return { name: a.slice(0, dot), group: a.slice(dot + 1), version: b, text };
    }
    throw bad();
  }
  if (parts.length === 3) {
    const [group, version, name] = parts as [string, string, string];
    return { group, version, name, text };
  }
  throw bad();
}
