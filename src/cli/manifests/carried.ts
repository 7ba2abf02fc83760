// What of the settings `kobun manifests` was given must reach `kobun run` in the Deployment
// through a file: everything the Deployment's arguments do not say (lease mode, timings,
// clusterWideAbove, ...). Rendered into a ConfigMap mounted as the run's `--config`.

import { resolveSettings, resourcesAsYaml, type Settings } from "../../config/index.ts";

/** Where the Deployment mounts the ConfigMap; its key is the file name. */
export const CONFIG_DIR = "/etc/kobun";
export const CONFIG_FILE = "kobun.yaml";

/** Settings that only the laptop's side means, or that the Deployment's arguments carry. */
// `sharding.enabled` is derived from replicas, not a key of kobun.yaml.
const NOT_CARRIED = new Set(["namespaces", "probes", "kube.kubeconfig", "kube.context", "sharding.enabled"]);

/**
 * The settings that differ from what the Deployment's arguments alone would give, as a
 * kobun.yaml tree; null when there are none (then the Deployment needs no config file).
 */
export function carriedSettings(settings: Settings): Record<string, unknown> | null {
  const { include, exclude, allNamespaces } = settings.namespaces;
  const { standalone, name, priority } = settings.peering;
  const baseline = resolveSettings({
    flags: {
      namespaces: [...include, ...exclude.map((ns) => `!${ns}`)], allNamespaces, standalone, peering: name, priority,
    },
  });
  // The resources: entries go as written (not where they were read from): all of them differ from none.
  const given = { ...settings, resources: resourcesAsYaml(settings.resources) };
  return difference(given as unknown as Tree, baseline as unknown as Tree, "");
}

type Tree = Record<string, unknown>;

function difference(given: Tree, baseline: Tree, path: string): Tree | null {
  const out: Tree = {};
  for (const [key, value] of Object.entries(given)) {
    const at = path ? `${path}.${key}` : key;
    if (NOT_CARRIED.has(at)) continue;
    const base = baseline[key];
    if (isTree(value) && isTree(base)) {
      const nested = difference(value, base, at);
      if (nested) out[key] = nested;
    } else if (JSON.stringify(value) !== JSON.stringify(base)) {
      out[key] = value;
    }
  }
  return Object.keys(out).length > 0 ? out : null;
}

function isTree(value: unknown): value is Tree {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
