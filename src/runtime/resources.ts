// Which resources this deployment handles, and how, from kobun.yaml's `resources:` (keyed by
// the selectors the handlers registered): keys naming no registered resource are rejected
// before anything starts; `enabled: false` drops a resource; the rest go with its streams.

import { closestMatch, ConfigError, configIssue, type ResourceSettings, type Settings } from "../config/index.ts";
import { parseSelector, type ResourceSelector } from "../kube/discovery.ts";

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
  if (issues.length > 0) throw new ConfigError(issues);
}

/** The selectors to resolve and watch, each with its settings (none when the file has no entry): disabled ones left out. */
export function enabledSelectors(settings: Settings, selectors: readonly ResourceSelector[]): { selector: ResourceSelector; config: ResourceSettings | undefined }[] {
  return selectors
    .map((selector) => ({ selector, config: settings.resources[selectorKey(selector)] }))
    .filter(({ config }) => config?.enabled !== false);
}
