// Which resources this deployment handles, and how, from kobun.yaml's `resources:` (keyed by
// the selectors the handlers registered): keys naming no registered resource are rejected
// before anything starts; `enabled: false` drops a resource; the rest go with its streams.

import { closestMatch, ConfigError, configIssue, type ResourceSettings, type Settings } from "../config/index.ts";
import type { KubeClient } from "../kube/index.ts";
import { parseSelector, type ResourceSelector } from "../kube/index.ts";
import { ConnectionError } from "../kube/index.ts";
import { resourceName, type Resource } from "../kube/index.ts";
import { FatalError } from "./exits.ts";
import type { Registry } from "../declaring/index.ts";
import { metadataDeclarations } from "../declaring/index.ts";

/** The registered selectors' texts, as a resource key in kobun.yaml names them. */
function selectorKey(selector: ResourceSelector): string {
  return parseSelector(selector).text;
}

/** Selector text → the alias its handler module gave it (registry.aliases.all()). */
export type AliasTable = ReadonlyMap<string, string>;

/** How a registered resource is named in messages: its selector, and its alias beside it. */
const named = (text: string, aliases: AliasTable) => (aliases.has(text) ? `${text} (alias ${aliases.get(text)})` : text);

/**
 * Throws a ConfigError naming each key no handler registers (file, line, did-you-mean, the
 * known ones with their aliases), and each resource given two entries (selector and alias).
 */
export function checkResourceKeys(settings: Settings, selectors: readonly ResourceSelector[], aliases: AliasTable = new Map()): void {
  const texts = selectors.map(selectorKey);
  const known = [...texts, ...texts.flatMap((text) => (aliases.has(text) ? [aliases.get(text)!] : []))];
  const names = [...selectors.map((selector) => parseSelector(selector).name), ...known.slice(texts.length)];
  const issues = Object.values(settings.resources)
    .filter((entry) => !known.includes(entry.key))
    .map((entry) => {
      // A typo of the whole selector, of an alias, or of its resource name ("configmap" for "v1/configmaps").
      const byName = closestMatch(entry.key, names);
      const suggestion = closestMatch(entry.key, known) ?? (byName === undefined ? undefined : known[names.indexOf(byName)]);
      const hint = suggestion ? `; did you mean "${suggestion}"?` : "";
      const registered = texts.length > 0 ? texts.map((text) => named(text, aliases)).join(", ") : "none";
      return configIssue({ file: entryFile(entry), path: `resources.${entry.key}` }, `no handler registers this resource${hint} (registered: ${registered})`);
    });
  for (const text of texts) {
    const alias = aliases.get(text);
    const twice = alias !== undefined && settings.resources[text] && settings.resources[alias];
    if (twice) issues.push(configIssue({ file: entryFile(twice), path: `resources.${alias}` }, `${text} has an entry under its selector already; give it one entry, under either name`));
  }
  issues.push(...apartPeering(settings));
  if (issues.length > 0) throw new ConfigError(issues);
}

/** Entries with namespaces of their own need one peering for the cluster: Kopf-style peering objects follow the global namespaces only. */
function apartPeering(settings: Settings): ReturnType<typeof configIssue>[] {
  const { peering } = settings;
  if (peering.standalone || peering.clusterwide || peering.mode === "lease") return [];
  return Object.values(settings.resources)
    .filter((entry) => entry.namespaces !== undefined && entry.enabled)
    .map((entry) => configIssue({ file: entryFile(entry), path: `resources.${entry.key}.namespaces` },
      "a resource watched in namespaces of its own needs one peering for the cluster (per-namespace peering follows the global namespaces): set peering.clusterwide: true, peering.mode: lease, or peering.standalone: true"));
}

const entryFile = (entry: ResourceSettings) => (entry.line === undefined ? entry.file : `${entry.file}:${entry.line}`);

/** The selectors to resolve and watch, each with its settings (under its selector or its alias; none when the file has no entry): disabled ones left out. */
export function enabledSelectors(settings: Settings, selectors: readonly ResourceSelector[], aliases: AliasTable = new Map()): { selector: ResourceSelector; config: ResourceSettings | undefined }[] {
  const entryOf = (text: string) => settings.resources[text] ?? (aliases.has(text) ? settings.resources[aliases.get(text)!] : undefined);
  return selectors
    .map((selector) => ({ selector, config: entryOf(selectorKey(selector)) }))
    .filter(({ config }) => config?.enabled !== false);
}

/**
 * The indexes kept from a resource with `enabled: false`: that resource is not watched, so they
 * stay empty for the handlers of the others; the operator says so at start (the key to change).
 */
export function disabledIndexes(settings: Settings, indexes: readonly { id: string; selector: ResourceSelector }[], aliases: AliasTable = new Map()): { index: string; resource: string; key: string }[] {
  const enabled = new Set(enabledSelectors(settings, indexes.map((i) => i.selector), aliases).map(({ selector }) => selector));
  return indexes.filter((i) => !enabled.has(i.selector)).map((i) => {
    const text = selectorKey(i.selector);
    const entry = settings.resources[text] ? text : aliases.get(text) ?? text;
    return { index: i.id, resource: named(text, aliases), key: `resources.${entry}.enabled` };
  });
}

/** The on.validate/on.mutate webhooks still served: those of a resource with `enabled: false` are left out, like its handlers. */
export function enabledWebhooks<W extends { selector: ResourceSelector }>(settings: Settings, webhooks: readonly W[], aliases: AliasTable = new Map()): W[] {
  const enabled = new Set(enabledSelectors(settings, webhooks.map((w) => w.selector), aliases).map(({ selector }) => selector));
  return webhooks.filter((w) => enabled.has(w.selector));
}

/** Where an entry is, for messages: "kobun.yaml:12: resources.pods". */
function entryWhere(config: ResourceSettings): string {
  return `${config.line === undefined ? config.file : `${config.file}:${config.line}`}: resources.${config.key}`;
}

/**
 * The resource as this deployment serves it: another `version` of its group and kind when
 * the entry asks (checked against discovery), and its scope checked against `clusterScoped`.
 * Throws a FatalError (exit 5: the cluster is not what the config says) naming the entry.
 */
export async function configuredResource(client: KubeClient, selector: ResourceSelector, resource: Resource, config: ResourceSettings | undefined, signal: AbortSignal): Promise<Resource> {
  if (config === undefined) return resource;
  let served = resource;
  if (config.version !== undefined && config.version !== resource.version) {
    if (parseSelector(selector).version !== undefined) {
      throw new FatalError("fatal", `${entryWhere(config)}.version: the handlers name the version in their selector ${JSON.stringify(parseSelector(selector).text)}; drop it there to choose the version here`);
    }
    try {
      served = await client.resolve({ group: resource.group, version: config.version, plural: resource.plural }, { signal });
    } catch (error) {
      if (error instanceof ConnectionError || signal.aborted) throw error;
      const api = resource.group ? `${resource.group}/${config.version}` : config.version;
      throw new FatalError("fatal", `${entryWhere(config)}.version: the API server does not serve ${resource.plural} in ${api} (its preferred version is ${resource.version})`, { cause: error });
    }
  }
  if (config.clusterScoped !== undefined && config.clusterScoped === served.namespaced) {
    const actual = served.namespaced ? "namespaced" : "cluster-scoped";
    throw new FatalError("fatal", `${entryWhere(config)}.clusterScoped: expected ${config.clusterScoped ? "a cluster-scoped" : "a namespaced"} resource, but the API server serves ${resourceName(served)} ${actual}`);
  }
  if (config.namespaces !== undefined && !served.namespaced) {
    throw new FatalError("fatal", `${entryWhere(config)}.namespaces: the API server serves ${resourceName(served)} cluster-scoped; it has no namespaces to choose`);
  }
  if (config.storage === "status" && !served.statusSubresource) {
    throw new FatalError("fatal", `${entryWhere(config)}.storage: "status" needs a status subresource, and the API server serves ${resourceName(served)} without one; use "annotations" or "auto"`);
  }
  return served;
}

/** Who declared a resource metadata-only (declaring/metadata-only.ts), merged over the selectors that name it. */
export interface Declaration {
  declared: string[];
  undeclared: string[];
}

/**
 * Why a resource is watched metadata-only (for the start-up log), or undefined: in full. The
 * entry decides when it says; otherwise every handler of the resource must have declared it.
 * Progress cannot be read back from a status that is never received: "status" storage is refused.
 */
export function metadataOnlyReason(config: ResourceSettings | undefined, declaration: Declaration | undefined): string | undefined {
  const declaredByAll = declaration !== undefined && declaration.declared.length > 0 && declaration.undeclared.length === 0;
  const why = config?.metadataOnly === true ? `${entryWhere(config)}.metadataOnly is true`
    : config?.metadataOnly === undefined && declaredByAll ? `every handler declares it: ${declaration.declared.join(", ")}`
    : undefined;
  if (why && config?.storage === "status") {
    throw new FatalError("fatal", `${entryWhere(config)}.storage: "status" cannot be read back from a metadata-only watch (${why}); use "annotations" or "auto"`);
  }
  return why;
}

/** The settings a resource's reconciler works with: its entry's workers and handling over the global ones. */
export function settingsFor(settings: Settings, config: ResourceSettings | undefined): Settings {
  if (config === undefined || (config.workers === undefined && config.handling === undefined)) return settings;
  return {
    ...settings,
    workers: { ...settings.workers, ...config.workers },
    handling: { ...settings.handling, ...config.handling },
  };
}

/** The enabled resources as the API server serves them, the kobun.yaml entries of those that have one, and those watched metadata-only (why). */
export async function resolveResources(client: KubeClient, settings: Settings, registry: Registry, signal: AbortSignal): Promise<{ resources: Resource[]; configs: Map<Resource, ResourceSettings>; metadataOnly: Map<Resource, string> }> {
  const found = new Map<string, Resource>();
  const configs = new Map<Resource, ResourceSettings>();
  const declarations = new Map<string, Declaration>();
  const registered = metadataDeclarations([...registry.handlers, ...registry.background, ...registry.indexes]);
  for (const { selector, config } of enabledSelectors(settings, registry.selectors(), registry.aliases.all())) {
    let resource: Resource;
    try {
      resource = await client.resolve(selector, { signal });
    } catch (error) {
      if (signal.aborted) break;
      if (error instanceof ConnectionError) throw new FatalError("connect", error.message, { cause: error });
      const what = typeof selector === "string" ? selector : JSON.stringify(selector);
      throw new FatalError("fatal", `handled resource ${what} is not served by the API server (is its CRD installed?): ${(error as Error).message}`, { cause: error });
    }
    const served = await configuredResource(client, selector, resource, config, signal).catch((error: unknown) => {
      throw error instanceof ConnectionError ? new FatalError("connect", error.message, { cause: error }) : error;
    });
    const name = resourceName(served);
    found.set(name, served);
    if (config) configs.set(served, config);
    // Several selectors may name one resource: all their registrations count.
    const mine = registered.get(selectorKey(selector));
    const merged = declarations.get(name) ?? { declared: [], undeclared: [] };
    if (mine) declarations.set(name, { declared: [...merged.declared, ...mine.declared], undeclared: [...merged.undeclared, ...mine.undeclared] });
  }
  const metadataOnly = new Map<Resource, string>();
  for (const [name, resource] of found) {
    const why = metadataOnlyReason(configs.get(resource), declarations.get(name));
    if (why) metadataOnly.set(resource, why);
  }
  return { resources: [...found.values()], configs, metadataOnly };
}
