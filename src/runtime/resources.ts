// Which resources this deployment handles, and how, from kobun.yaml's `resources:` (keyed by
// the selectors the handlers registered, their aliases, or any kubectl form naming one of them:
// config/resource-keys.ts): keys naming no registered resource, or several, are rejected before
// anything starts, the others re-keyed by the selector they name; `enabled: false` drops a
// resource; the rest go with its streams.
// How the API server serves them is served-resources.ts's.

import {
  closestMatch, ConfigError, configIssue, keyNames, resourcesNamed,
  type KeyCandidate, type ResourceSettings, type Settings,
} from "../config/index.ts";
import { parseSelector, type KubeObject, type ResourceSelector } from "../kube/index.ts";

/** The registered selectors' texts, as a resource key in kobun.yaml names them. */
export function selectorKey(selector: ResourceSelector): string {
  return parseSelector(selector).text;
}

/** Selector text → the alias its handler module gave it (registry.aliases.all()). */
export type AliasTable = ReadonlyMap<string, string>;

/** Why a kind, singular or short name may name nothing: kobun learns them only from a CRD. */
const NAMES_KNOWN = "; a kind, singular or short name is known only for a resource whose CRD kobun knows " +
  "(defineResource, or a CRD file beside the handlers)";

/** How a registered resource is named in messages: its selector, and its alias beside it. */
const named = (text: string, aliases: AliasTable) =>
  (aliases.has(text) ? `${text} (alias ${aliases.get(text)})` : text);

/**
 * The settings with each `resources:` key replaced by the selector it names (the entry keeps its
 * `key` as written, for messages). Throws a ConfigError naming each key that names no registered
 * resource (file, line, did-you-mean, the known ones with their aliases) or several, and each
 * resource given two entries. `definitions`: the CRDs of defineResource (their kinds, singular and short names).
 */
export function checkResourceKeys(
  settings: Settings, selectors: readonly ResourceSelector[], aliases: AliasTable = new Map(),
  definitions: readonly KubeObject[] = [],
): Settings {
  const candidates = selectors.map((selector) => candidateOf(selector, aliases, definitions));
  const texts = candidates.map((c) => c.text);
  const known = [...texts, ...texts.flatMap((text) => (aliases.has(text) ? [aliases.get(text)!] : []))];
  const names = [...selectors.map((selector) => parseSelector(selector).name), ...known.slice(texts.length)];
  const registered = texts.length > 0 ? texts.map((text) => named(text, aliases)).join(", ") : "none";
  const issues: ReturnType<typeof configIssue>[] = [];
  const byResource = new Map<string, ResourceSettings>();
  for (const entry of Object.values(settings.resources)) {
    const where = { file: entryFile(entry), path: `resources.${entry.key}` };
    const found = resourcesNamed(entry.key, candidates);
    if (found.length > 1) {
      issues.push(configIssue(where, `names ${found.length} registered resources ` +
        `(${found.map((text) => named(text, aliases)).join(", ")}): write the one meant, e.g. with its group`));
    } else if (found.length === 0) {
      // A typo of the whole selector, of an alias, or of its resource name ("configmap" for "v1/configmaps").
      const byName = closestMatch(entry.key, names);
      const suggestion = closestMatch(entry.key, known)
        ?? (byName === undefined ? undefined : known[names.indexOf(byName)]);
      const hint = suggestion ? `; did you mean "${suggestion}"?` : "";
      issues.push(configIssue(where, `no handler registers this resource${hint} (registered: ${registered})` +
        (/[./]/.test(entry.key) ? "" : NAMES_KNOWN)));
    } else {
      const earlier = byResource.get(found[0]!);
      if (earlier) {
        const under = earlier.key === found[0] ? "its selector" : `resources.${earlier.key}`;
        issues.push(configIssue(where,
          `${found[0]} has an entry under ${under} already; give it one entry, under either name`));
      } else {
        byResource.set(found[0]!, entry);
        const named = parseSelector(found[0]!).version;
        if (entry.version !== undefined && named !== undefined && entry.version !== named) {
          issues.push(configIssue({ ...where, path: `${where.path}.version` },
            `the handlers name ${named} in their selector ${JSON.stringify(found[0])} (a typed token always names ` +
            "its version): to serve another version from kobun.yaml, name none there, e.g. \"widgets.example.com\""));
        }
      }
    }
  }
  issues.push(...apartPeering(settings));
  if (issues.length > 0) throw new ConfigError(issues);
  return { ...settings, resources: Object.fromEntries(byResource) };
}

/** What registration knows of a selector's resource: its CRD's names when a handler module defines it. */
function candidateOf(
  selector: ResourceSelector, aliases: AliasTable, definitions: readonly KubeObject[],
): KeyCandidate {
  const { group, version, name, text } = parseSelector(selector);
  const alias = aliases.get(text);
  type Names = { plural: string; kind?: string; singular?: string; shortNames?: string[] };
  const specOf = (crd: KubeObject) => crd.spec as { group?: string; names?: Names } | undefined;
  const crd = definitions.find((d) => {
    const names = specOf(d)?.names;
    return specOf(d)?.group === group && names !== undefined && keyNames(name, { text: "", ...names });
  });
  const crdNames = crd ? specOf(crd)?.names : undefined;
  return {
    text, plural: crdNames?.plural ?? name,
    ...(alias !== undefined ? { alias } : {}), ...(group !== undefined ? { group } : {}),
    ...(version !== undefined ? { version } : {}), ...(crdNames?.kind ? { kind: crdNames.kind } : {}),
    ...(crdNames?.singular ? { singular: crdNames.singular } : {}),
    ...(crdNames?.shortNames ? { shortNames: crdNames.shortNames } : {}),
  };
}

/**
 * Entries with namespaces of their own need one peering for the cluster: Kopf-style peering
 * objects follow the global namespaces only.
 */
function apartPeering(settings: Settings): ReturnType<typeof configIssue>[] {
  const { peering } = settings;
  if (peering.standalone || peering.clusterwide || peering.mode === "lease") return [];
  return Object.values(settings.resources)
    .filter((entry) => entry.namespaces !== undefined && entry.enabled)
    .map((entry) => configIssue({ file: entryFile(entry), path: `resources.${entry.key}.namespaces` },
      "a resource watched in namespaces of its own needs one peering for the cluster " +
        "(per-namespace peering follows the global namespaces): " +
        "set peering.clusterwide: true, peering.mode: lease, or peering.standalone: true"));
}

const entryFile = (entry: ResourceSettings) => (entry.line === undefined ? entry.file : `${entry.file}:${entry.line}`);

/**
 * The selectors to resolve and watch, each with its settings (under its selector or its alias;
 * none when the file has no entry): disabled ones left out.
 */
export function enabledSelectors(
  settings: Settings, selectors: readonly ResourceSelector[], aliases: AliasTable = new Map(),
): { selector: ResourceSelector; config: ResourceSettings | undefined }[] {
  const entryOf = (text: string) =>
    settings.resources[text] ?? (aliases.has(text) ? settings.resources[aliases.get(text)!] : undefined);
  return selectors
    .map((selector) => ({ selector, config: entryOf(selectorKey(selector)) }))
    .filter(({ config }) => config?.enabled !== false);
}

/**
 * The indexes kept from a resource with `enabled: false`: that resource is not watched, so they
 * stay empty for the handlers of the others; the operator says so at start (the key to change).
 */
export function disabledIndexes(
  settings: Settings, indexes: readonly { id: string; selector: ResourceSelector }[], aliases: AliasTable = new Map(),
): { index: string; resource: string; key: string }[] {
  const enabled = enabledOf(settings, indexes.map((i) => i.selector), aliases);
  return indexes.filter((i) => !enabled.has(i.selector))
    .map((i) => ({ index: i.id, ...disabledKey(settings, i.selector, aliases) }));
}

/** What a reconcile reads besides its own resource (declaring/'s ReconcileSpec). */
interface ReconcileReads {
  id: string;
  owns: readonly ResourceSelector[];
  watches: readonly { selector: ResourceSelector }[];
}

/**
 * What the reconciles own or watch of a resource with `enabled: false`: not watched, so ctx.cache cannot read it
 * and its changes wake nothing; the operator says so at start (the key to change), as for an index.
 */
export function disabledReconcileReads(
  settings: Settings, specs: readonly ReconcileReads[], aliases: AliasTable = new Map(),
): { reconcile: string; resource: string; key: string }[] {
  return specs.flatMap((spec) => {
    const read = [...spec.owns, ...spec.watches.map((watched) => watched.selector)];
    const enabled = enabledOf(settings, read, aliases);
    return read.filter((selector) => !enabled.has(selector)).map((selector) => ({
      reconcile: spec.id, ...disabledKey(settings, selector, aliases),
    }));
  });
}

/** A disabled resource's name and the kobun.yaml key that disables it, as the file wrote the key. */
function disabledKey(
  settings: Settings, selector: ResourceSelector, aliases: AliasTable,
): { resource: string; key: string } {
  const text = selectorKey(selector);
  // The key as the file wrote it (checkResourceKeys re-keyed the entry by the selector it names).
  const entry = settings.resources[text] ?? (aliases.has(text) ? settings.resources[aliases.get(text)!] : undefined);
  return { resource: named(text, aliases), key: `resources.${entry?.key ?? text}.enabled` };
}

/**
 * The on.validate/on.mutate webhooks still served: those of a resource with `enabled: false` are
 * left out, like its handlers.
 */
export function enabledWebhooks<W extends { selector: ResourceSelector }>(
  settings: Settings, webhooks: readonly W[], aliases: AliasTable = new Map(),
): W[] {
  const enabled = enabledOf(settings, webhooks.map((w) => w.selector), aliases);
  return webhooks.filter((w) => enabled.has(w.selector));
}

/** Which of `selectors` are enabled (enabledSelectors), as a set. */
function enabledOf(
  settings: Settings, selectors: readonly ResourceSelector[], aliases: AliasTable,
): Set<ResourceSelector> {
  return new Set(enabledSelectors(settings, selectors, aliases).map(({ selector }) => selector));
}

/** The settings a resource's reconciler works with: its entry's workers and handling over the global ones. */
export function settingsFor(settings: Settings, config: ResourceSettings | undefined): Settings {
  if (config === undefined || (!config.workers && !config.handling && !config.reconcile)) return settings;
  const reconcile = config.reconcile?.backoff
    ? { ...settings.reconcile, backoff: { ...settings.reconcile.backoff, ...config.reconcile.backoff } }
    : settings.reconcile;
  return {
    ...settings,
    workers: { ...settings.workers, ...config.workers },
    handling: { ...settings.handling, ...config.handling },
    reconcile,
  };
}
