// The enabled resources as the API server serves them: each resolved by discovery, checked
// against its kobun.yaml entry (version, scope, storage), and whether it is watched
// metadata-only. Apart from resources.ts, which reads the file's keys before anything connects:
// this asks the cluster.

import type { ResourceSettings, Settings } from "../config/index.ts";
import { metadataDeclarations, type Registry } from "../declaring/index.ts";
import {
  ConnectionError, parseSelector, resourceName, type KubeClient, type Resource, type ResourceSelector,
} from "../kube/index.ts";
import { FatalError } from "./exits.ts";
import { enabledSelectors, selectorKey } from "./resources.ts";

/** Where an entry is, for messages: "kobun.yaml:12: resources.pods". */
function entryWhere(config: ResourceSettings): string {
  return `${config.line === undefined ? config.file : `${config.file}:${config.line}`}: resources.${config.key}`;
}

/**
 * The resource as this deployment serves it: another `version` of its group and kind when
 * the entry asks (checked against discovery), and its scope checked against `clusterScoped`.
 * Throws a FatalError (exit 5: the cluster is not what the config says) naming the entry.
 */
export async function configuredResource(
  client: KubeClient, selector: ResourceSelector, resource: Resource, config: ResourceSettings | undefined,
  signal: AbortSignal,
): Promise<Resource> {
  if (config === undefined) return resource;
  const where = entryWhere(config);
  let served = resource;
  if (config.version !== undefined && config.version !== resource.version) {
    if (parseSelector(selector).version !== undefined) {
      const text = JSON.stringify(parseSelector(selector).text);
      throw new FatalError("fatal", `${where}.version: the handlers name the version in their selector ${text}; ` +
        "drop it there to choose the version here");
    }
    try {
      const wanted = { group: resource.group, version: config.version, plural: resource.plural };
      served = await client.resolve(wanted, { signal });
    } catch (error) {
      if (error instanceof ConnectionError || signal.aborted) throw error;
      const api = resource.group ? `${resource.group}/${config.version}` : config.version;
      throw new FatalError("fatal", `${where}.version: the API server does not serve ${resource.plural} in ${api} ` +
        `(its preferred version is ${resource.version})`, { cause: error });
    }
  }
  const name = resourceName(served);
  if (config.clusterScoped !== undefined && config.clusterScoped === served.namespaced) {
    const actual = served.namespaced ? "namespaced" : "cluster-scoped";
    const expected = config.clusterScoped ? "a cluster-scoped" : "a namespaced";
    throw new FatalError("fatal",
      `${where}.clusterScoped: expected ${expected} resource, but the API server serves ${name} ${actual}`);
  }
  if (config.namespaces !== undefined && !served.namespaced) {
    throw new FatalError("fatal",
      `${where}.namespaces: the API server serves ${name} cluster-scoped; it has no namespaces to choose`);
  }
  if (config.storage === "status" && !served.statusSubresource) {
    throw new FatalError("fatal", `${where}.storage: "status" needs a status subresource, ` +
      `and the API server serves ${name} without one; use "annotations" or "auto"`);
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
export function metadataOnlyReason(
  config: ResourceSettings | undefined, declaration: Declaration | undefined,
): string | undefined {
  const declaredByAll =
    declaration !== undefined && declaration.declared.length > 0 && declaration.undeclared.length === 0;
  const why = config?.metadataOnly === true ? `${entryWhere(config)}.metadataOnly is true`
    : config?.metadataOnly === undefined && declaredByAll
    ? `every handler declares it: ${declaration.declared.join(", ")}`
    : undefined;
  if (why && config?.storage === "status") {
    throw new FatalError("fatal", `${entryWhere(config)}.storage: "status" cannot be read back ` +
      `from a metadata-only watch (${why}); use "annotations" or "auto"`);
  }
  return why;
}

/** The handled resources: as the API server serves them, their kobun.yaml entries, and why any is metadata-only. */
export interface ServedResources {
  resources: Resource[];
  /** The entries of those that have one. */
  configs: Map<Resource, ResourceSettings>;
  /** Those watched metadata-only, and why. */
  metadataOnly: Map<Resource, string>;
}

/**
 * The enabled resources as the API server serves them, the kobun.yaml entries of those that have
 * one, and those watched metadata-only (why).
 */
export async function resolveResources(
  client: KubeClient, settings: Settings, registry: Registry, signal: AbortSignal,
): Promise<ServedResources> {
  const found = new Map<string, Resource>();
  const configs = new Map<Resource, ResourceSettings>();
  const declarations = new Map<string, Declaration>();
  // What a reconcile reads (its resource, what it owns and watches) counts as a reader that needs bodies,
  // unless a token says metadataOnly: ctx.cache must not hold a Job without its status.
  const reads = registry.reconciles.specs.flatMap((spec) => {
    const selectors = [spec.selector, ...spec.owns, ...spec.watches.map((w) => w.selector)];
    return selectors.map((selector) => ({ id: spec.id, selector }));
  });
  const { handlers, background, indexes } = registry;
  const registered = metadataDeclarations([...handlers, ...background, ...indexes, ...reads]);
  for (const { selector, config } of enabledSelectors(settings, registry.selectors(), registry.aliases.all())) {
    let resource: Resource;
    try {
      resource = await client.resolve(selector, { signal });
    } catch (error) {
      if (signal.aborted) break;
      if (error instanceof ConnectionError) throw new FatalError("connect", error.message, { cause: error });
      const what = typeof selector === "string" ? selector : JSON.stringify(selector);
      const why = (error as Error).message;
      throw new FatalError("fatal",
        `handled resource ${what} is not served by the API server (is its CRD installed?): ${why}`, { cause: error });
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
    if (!mine) continue;
    const { declared, undeclared } = merged;
    declarations.set(name, {
      declared: [...declared, ...mine.declared], undeclared: [...undeclared, ...mine.undeclared],
    });
  }
  const metadataOnly = new Map<Resource, string>();
  for (const [name, resource] of found) {
    const why = metadataOnlyReason(configs.get(resource), declarations.get(name));
    if (why) metadataOnly.set(resource, why);
  }
  return { resources: [...found.values()], configs, metadataOnly };
}
