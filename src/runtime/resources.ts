// Which resources this deployment handles, and how, from kobun.yaml's `resources:` (keyed by
// the selectors the handlers registered): keys naming no registered resource are rejected
// before anything starts; `enabled: false` drops a resource; the rest go with its streams.

import { closestMatch, ConfigError, configIssue, type ResourceSettings, type Settings } from "../config/index.ts";
import type { KubeClient } from "../kube/client.ts";
import { parseSelector, type ResourceSelector } from "../kube/discovery.ts";
import { ConnectionError } from "../kube/errors.ts";
import { resourceName, type Resource } from "../kube/types.ts";
import { FatalError } from "./exits.ts";

/** The registered selectors' texts, as a resource key in kobun.yaml names them. */
function selectorKey(selector: ResourceSelector): string {
  return parseSelector(selector).text;
}

/** Throws a ConfigError naming each key no handler registers (file, line, did-you-mean, the known ones). */
export function checkResourceKeys(settings: Settings, selectors: readonly ResourceSelector[]): void {
  const known = selectors.map(selectorKey);
  const issues = Object.values(settings.resources)
    .filter((entry) => !known.includes(entry.key))
    .map((entry) => {
      // A typo of the whole selector, or of its resource name ("configmap" for "v1/configmaps").
      const names = selectors.map((selector) => parseSelector(selector).name);
      const byName = closestMatch(entry.key, names);
      const suggestion = closestMatch(entry.key, known) ?? (byName === undefined ? undefined : known[names.indexOf(byName)]);
      const hint = suggestion ? `; did you mean "${suggestion}"?` : "";
      const registered = known.length > 0 ? known.join(", ") : "none";
      const file = entry.line === undefined ? entry.file : `${entry.file}:${entry.line}`;
      return configIssue({ file, path: `resources.${entry.key}` }, `no handler registers this resource${hint} (registered: ${registered})`);
    });
  issues.push(...Object.values(settings.resources).flatMap(unsupported));
  if (issues.length > 0) throw new ConfigError(issues);
}

/** Keys the schema knows but this version does not act on yet: refused rather than silently ignored. */
function unsupported(entry: ResourceSettings): ReturnType<typeof configIssue>[] {
  const file = entry.line === undefined ? entry.file : `${entry.file}:${entry.line}`;
  const given = [
    entry.namespaces !== undefined && "namespaces",
    entry.metadataOnly && "metadataOnly",
  ].filter((key): key is string => typeof key === "string");
  return given.map((key) => configIssue({ file, path: `resources.${entry.key}.${key}` }, "not supported by this version of kobun yet (issue 20); remove it, or use the global setting"));
}

/** The selectors to resolve and watch, each with its settings (none when the file has no entry): disabled ones left out. */
export function enabledSelectors(settings: Settings, selectors: readonly ResourceSelector[]): { selector: ResourceSelector; config: ResourceSettings | undefined }[] {
  return selectors
    .map((selector) => ({ selector, config: settings.resources[selectorKey(selector)] }))
    .filter(({ config }) => config?.enabled !== false);
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
  if (config.storage === "status" && !served.statusSubresource) {
    throw new FatalError("fatal", `${entryWhere(config)}.storage: "status" needs a status subresource, and the API server serves ${resourceName(served)} without one; use "annotations" or "auto"`);
  }
  return served;
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
