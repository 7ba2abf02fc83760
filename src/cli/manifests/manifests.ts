// cli/manifests/: what deploys an operator (`kobun manifests` and the objects it prints), for
// whoever installs it; a compiled operator prints them too, from its embedded manifests. Never
// imports cli/project/ nor cli/operator/: test/contracts/rooms.ts, FORBIDDEN.

// `kobun manifests`: everything needed to deploy this operator, derived from its handlers:
// the CRDs shipped beside the handlers, the peering CRDs, a least-privilege ServiceAccount with
// its roles and bindings (rbac.ts), the settings its flags cannot say in a ConfigMap (carried.ts),
// and a Deployment running the binary (deployment.ts).

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";
import type { Settings } from "../../config/index.ts";
import { registry, type Registry } from "../../declaring/index.ts";
import { parseSelector, type KubeObject, type ResourceSelector } from "../../kube/index.ts";
import { peeringCRDs } from "../../peering/index.ts";
import {
  checkResourceKeys, enabledSelectors, enabledWebhooks, manifestCRDs, withDefinitions, type Manifest,
} from "../../runtime/index.ts";
import { ConfigError, configIssue, parseRunFlags, resolveSettings, resourceNamespaces } from "../../config/index.ts";
import { defaultHandlerPaths, loadHandlers, type Embedded } from "../handlers.ts";
import { readFlags, refuseHandlerPaths, stringFlag } from "../args.ts";
import { carriedSettings, CONFIG_FILE } from "./carried.ts";
import { OWN_ENV, renderDeployment } from "./deployment.ts";
import { rbacObjects, rbacRules } from "./rbac.ts";
import { webhookObjects, webhookRules } from "./webhooks.ts";

export interface ManifestOptions {
  name: string;
  namespace: string;
  image: string;
  settings: Settings;
  selectors: ResourceSelector[];
  /** The handlers' declared children (registry.children()). */
  children?: ResourceSelector[];
  /** Selector text → the alias handler modules gave it (registry.aliases.all()). */
  aliases?: ReadonlyMap<string, string>;
  /** The resources only indexes read (registry.watchedOnly()). */
  watched?: ResourceSelector[];
  /** The resources only on.event handlers handle (eventOnly()): patched only to release a leftover finalizer. */
  eventOnly?: ResourceSelector[];
  /** The resources reconciles own and nothing handles (ownedOnly()): granted as children only. */
  ownedOnly?: ResourceSelector[];
  /** The resources whose handlers make children (owners()): granted update of their finalizers. */
  owners?: ResourceSelector[];
  manifests: Manifest[];
  /** The operator's own environment variables (`--env NAME=VALUE`), set in the Deployment. */
  env?: readonly { name: string; value: string }[];
}

export function renderManifests(options: ManifestOptions): string {
  const { name, namespace, image } = options;
  const crds = manifestCRDs(options.manifests);
  // kobun.yaml's resources: a key naming no registered resource is an error here too (the others are
  // re-keyed by the selector they name); disabled resources get no grants.
  const settings = checkResourceKeys(options.settings, options.selectors, options.aliases, crds);
  const enabled = enabledSelectors(settings, options.selectors, options.aliases);
  const selectors = enabled.map(({ selector }) => selector);
  // Resources with namespaces of their own are granted there (rbac.ts).
  const apart = new Map(enabled.flatMap(({ selector, config }) =>
    config?.namespaces ? [[selector, resourceNamespaces(config.namespaces)!] as const] : []));
  const { watched, eventOnly, ownedOnly, owners } = options;
  const rules = rbacRules({
    settings, selectors, crds, children: options.children, apart, watched, eventOnly, ownedOnly, owners,
  });
  // Before the CRDs are printed: it sets the conversion of those with an on.convert.
  // Disabled resources get no webhooks either (conversions stay: the CRD needs them).
  const admissions = {
    webhooks: enabledWebhooks(settings, registry.webhooks, options.aliases), conversions: registry.conversions,
  };
  const webhooks = webhookObjects(name, namespace, crds, admissions);
  rules.cluster.push(...webhookRules(name, admissions));
  const docs: KubeObject[] = [
    ...crds,
    ...(settings.peering.standalone || settings.peering.mode === "lease" ? [] : peeringCRDs(settings.peering.group)),
    ...rbacObjects(name, namespace, settings, rules),
    ...webhooks,
  ];
  // Sharded replicas hand shards over when a Pod goes: evict them one at a time.
  if (settings.sharding.enabled) {
    docs.push({
      apiVersion: "policy/v1", kind: "PodDisruptionBudget", metadata: { name, namespace },
      spec: { maxUnavailable: 1, selector: { matchLabels: { app: name } } },
    });
  }
  const carried = carriedSettings(settings);
  if (carried) {
    const data = { [CONFIG_FILE]: stringify(carried) };
    docs.push({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data });
  }
  const deployment = renderDeployment({
    name, namespace, image, settings, config: carried !== null, webhooks: webhooks.length > 0, env: options.env,
  });
  return selectorNotes(settings) + [...docs.map((doc) => stringify(doc)), deployment].join("---\n");
}

/** RBAC cannot grant by label or field: say which resources the operator narrows by selectors that the roles do not. */
function selectorNotes(settings: Settings): string {
  const notes = Object.values(settings.resources)
    .filter((entry) => entry.enabled && (entry.labelSelector || entry.fieldSelector))
    .map((entry) => {
      const { labelSelector, fieldSelector } = entry;
      const by = [labelSelector && `labelSelector ${labelSelector}`, fieldSelector && `fieldSelector ${fieldSelector}`];
      return `#   ${entry.key}: ${by.filter(Boolean).join(", ")}`;
    });
  if (notes.length === 0) return "";
  return [
    "# kobun.yaml's resources: the operator lists and watches these only through selectors, which RBAC cannot express:",
    "# the roles below grant every object of them.",
    ...notes,
    "",
  ].join("\n");
}


export async function manifestsCommand(argv: string[], embedded: Embedded): Promise<number> {
  const own = readFlags(argv.filter((_, i) => isOwnManifestFlag(argv, i)), {
    name: { value: true }, image: { value: true }, "operator-namespace": { value: true }, env: { value: true },
  });
  const { flags, positionals } = parseRunFlags(argv.filter((_, i) => !isOwnManifestFlag(argv, i)));
  refuseHandlerPaths("manifests", positionals, embedded.handlersLoaded);
  const settings = resolveSettings({ flags, cwd: process.cwd() });
  const name = stringFlag(own.values, "name") ?? projectName(process.cwd()) ?? "kobun-operator";
  const namespace = stringFlag(own.values, "operator-namespace") ?? "default";
  checkNames(name, namespace);
  const env = envFlags(own.every.env ?? []);
  const loaded = embedded.handlersLoaded ? embedded.manifests : await loadHandlers(defaultHandlerPaths(positionals));
  const manifests = withDefinitions(loaded);
  process.stdout.write(
    renderManifests({
      name,
      namespace,
      image: stringFlag(own.values, "image") ?? `${name}:latest`,
      settings,
      selectors: registry.selectors(),
      aliases: registry.aliases.all(),
      watched: registry.watchedOnly(),
      eventOnly: eventOnly(),
      ownedOnly: ownedOnly(),
      owners: owners(),
      children: registry.children(),
      manifests,
      env,
    }),
  );
  return 0;
}

const selectorText = (selector: ResourceSelector) => parseSelector(selector).text;
/** The texts of the specs' selectors. */
const textsOf = (specs: readonly { selector: ResourceSelector }[]) =>
  new Set(specs.map((spec) => selectorText(spec.selector)));
/** The registry's selectors (as it names them: rbac.ts compares them by identity) whose text `wanted` holds. */
function selectorsWhere(from: Registry, wanted: (text: string) => boolean): ResourceSelector[] {
  return from.selectors().filter((selector) => wanted(selectorText(selector)));
}

/**
 * The resources only on.event handlers handle: they write no progress, results or finalizers, but
 * a kobun finalizer left by handlers that no longer match is released (a PATCH).
 */
export function eventOnly(from: Registry = registry): ResourceSelector[] {
  const writing = textsOf([
    ...from.handlers.filter((spec) => spec.kind !== "event"), ...from.background, ...from.reconciles.specs,
  ]);
  const handled = textsOf(from.handlers);
  return selectorsWhere(from, (text) => handled.has(text) && !writing.has(text));
}

/** The resources reconciles own and nothing else handles (no handler, daemon, timer or reconcile of their own). */
export function ownedOnly(from: Registry = registry): ResourceSelector[] {
  const handled = textsOf([...from.handlers, ...from.background, ...from.reconciles.specs]);
  const owned = new Set(from.reconciles.owned().map(selectorText));
  return selectorsWhere(from, (text) => owned.has(text) && !handled.has(text));
}

/**
 * The resources whose handlers make children (a handler's, daemon's or timer's `children`, a reconcile's `owns`
 * or `children`): the owners adopt() names, granted update of their finalizers (rbac.ts), and only they.
 */
export function owners(from: Registry = registry): ResourceSelector[] {
  const owning = textsOf([
    ...[...from.handlers, ...from.background].filter((spec) => (spec.options.children?.length ?? 0) > 0),
    ...from.reconciles.specs.filter((spec) => spec.owns.length > 0 || spec.children.length > 0),
  ]);
  return selectorsWhere(from, (text) => owning.has(text));
}

/**
 * The default name of everything manifests prints: the project's package.json name (cwd's), as a
 * Kubernetes name (a scope dropped, lowercase, other characters as "-"); undefined without one.
 */
export function projectName(cwd: string): string | undefined {
  try {
    const { name } = JSON.parse(readFileSync(join(cwd, "package.json"), "utf8")) as { name?: unknown };
    if (typeof name !== "string") return undefined;
    const dns = name.replace(/^@[^/]*\//, "").toLowerCase().replace(/[^a-z0-9-]+/g, "-").replace(/^-+|-+$/g, "");
    return dns.length > 0 ? dns.slice(0, 63).replace(/-+$/, "") : undefined;
  } catch {
    return undefined;
  }
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** --name and --operator-namespace become Kubernetes names: refused here (exit 3), not by kubectl apply later. */
function checkNames(name: string, namespace: string): void {
  const expected = 'a DNS label (lowercase letters, digits and "-", starting and ending with a letter or digit, ' +
    "at most 63)";
  const issues = [["--name", name], ["--operator-namespace", namespace]]
    .filter(([, value]) => !DNS_LABEL.test(value!))
    .map(([flag, value]) => configIssue({ flag: flag!, expected }, `expected ${expected}, got "${value}"`));
  if (issues.length > 0) throw new ConfigError(issues);
}

/**
 * `--env NAME=VALUE` (repeatable): the operator's own settings in the Deployment's environment. A name as
 * Kubernetes takes it, given once, not one of kobun's own (OWN_ENV); anything else is exit 3, every problem listed.
 */
function envFlags(given: readonly (string | true)[]): { name: string; value: string }[] {
  const expected = "NAME=VALUE, NAME of letters, digits, '_', '-' and '.', not starting with a digit";
  const issues: ReturnType<typeof configIssue>[] = [];
  const env: { name: string; value: string }[] = [];
  for (const pair of given) {
    const text = String(pair);
    const at = text.indexOf("=");
    const name = at > 0 ? text.slice(0, at) : "";
    const why = !/^[-._a-zA-Z][-._a-zA-Z0-9]*$/.test(name) ? `expected ${expected}, got "${text}"`
      : OWN_ENV.includes(name) ? `${name} is set by kobun (this replica's name and namespace)`
      : env.some((e) => e.name === name) ? `${name} is given twice` : undefined;
    if (why) issues.push(configIssue({ flag: "--env", expected }, why));
    else env.push({ name, value: text.slice(at + 1) });
  }
  if (issues.length > 0) throw new ConfigError(issues);
  return env;
}

/** `--name`, `--image`, `--operator-namespace`, `--env` (and their values) belong to manifests, not to run flags. */
function isOwnManifestFlag(argv: string[], index: number): boolean {
  const own = (arg: string | undefined) => arg !== undefined && /^--(name|image|operator-namespace|env)(=|$)/.test(arg);
  const arg = argv[index];
  return own(arg) || (own(argv[index - 1]) && !argv[index - 1]!.includes("=") && !arg!.startsWith("-"));
}
