// Pod Security admission, as kube-apiserver runs it by default (no exemptions, every namespace
// privileged unless labelled): a namespace's `pod-security.kubernetes.io/enforce` level refuses
// Pods that break it (403, "violates PodSecurity ..."); its `warn` level (defaulting to a stricter
// enforce level) answers with a Warning, for Pods and for the pod templates of workloads; a
// namespace's labels must be valid; relabelling one to a stricter enforce level warns about the
// Pods already in it. The checks are pod-security-checks.ts. Not modelled: the `audit` level
// (no audit log), the admission configuration's exemptions, and older policy versions: a label
// of `v1.x` is named as given but judged by the latest policy.

import { describe, violations, type Level } from "./pod-security-checks.ts";
import { resourceKey } from "./resources.ts";
import { ApiStatusError } from "./status.ts";
import type { Store } from "./store.ts";
import { addWarning } from "./warnings.ts";

const PREFIX = "pod-security.kubernetes.io/";
const LEVELS: Level[] = ["privileged", "baseline", "restricted"];
const NAMESPACES = resourceKey("", "namespaces");
const IGNORED_POD_SUBRESOURCES = new Set([
  "exec", "attach", "binding", "eviction", "log", "portforward", "proxy", "status",
]);

interface LevelVersion { level: Level; version: string }
interface Policy { enforce: LevelVersion; warn: LevelVersion; errors: { label: string; value: string; why: string }[] }

/**
 * The policy a namespace's labels ask for (upstream's PolicyToEvaluate): invalid levels enforce restricted but warn
 * privileged.
 */
function policyOf(labels: Record<string, string> = {}): Policy {
  const errors: Policy["errors"] = [];
  const level = (mode: string, invalid: Level): Level | undefined => {
    const value = labels[`${PREFIX}${mode}`];
    if (value === undefined) return undefined;
    if ((LEVELS as string[]).includes(value)) return value as Level;
    errors.push({ label: `${PREFIX}${mode}`, value, why: "must be one of privileged, baseline, restricted" });
    return invalid;
  };
  const version = (mode: string): string | undefined => {
    const value = labels[`${PREFIX}${mode}-version`];
    if (value === undefined || value === "latest" || /^v1\.(0|[1-9][0-9]*)$/.test(value)) return value;
    errors.push({ label: `${PREFIX}${mode}-version`, value, why: 'must be "latest" or "v1.x"' });
    return "latest";
  };
  const enforceLevel = level("enforce", "restricted");
  const enforce = { level: enforceLevel ?? "privileged", version: version("enforce") ?? "latest" };
  const warnLevel = level("warn", "privileged");
  const warnVersion = version("warn");
  level("audit", "privileged");
  version("audit");
  const enforceValid = enforceLevel !== undefined && !errors.some((e) => e.label === `${PREFIX}enforce`);
  // A stricter enforce level is warned about too, unless warn is set.
  const warn = warnLevel === undefined && enforceValid && LEVELS.indexOf(enforce.level) > 0
    ? { level: enforce.level, version: warnVersion ?? enforce.version }
    : { level: warnLevel ?? "privileged", version: warnVersion ?? "latest" };
  return { enforce, warn, errors };
}

const named = (lv: LevelVersion) => `${lv.level}:${lv.version}`;

/** Where a workload keeps its pod template (upstream's pod-spec extractor), or undefined for other resources. */
function templateOf(group: string, plural: string, object: any): any | undefined {
  const key = `${group}/${plural}`;
  if (key === "batch/cronjobs") return object?.spec?.jobTemplate?.spec?.template ?? null;
  if (key === "/podtemplates") return object?.template ?? null;
  const templated = [
    "/replicationcontrollers", "apps/replicasets", "apps/deployments",
    "apps/daemonsets", "apps/statefulsets", "batch/jobs",
  ];
  return templated.includes(key) ? (object?.spec?.template ?? null) : undefined;
}

/** An update that changes no container's image (nor the number of containers) is not judged again, as upstream. */
function significant(pod: any, old: any): boolean {
  const images = (list: any[] | undefined) => (list ?? []).map((c) => c.image);
  const same = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i]);
  if (!same(images(pod.spec?.containers), images(old.spec?.containers))) return true;
  if (!same(images(pod.spec?.initContainers), images(old.spec?.initContainers))) return true;
  const before = new Map<string, string>((old.spec?.ephemeralContainers ?? []).map((c: any) => [c.name, c.image]));
  return (pod.spec?.ephemeralContainers ?? []).some((c: any) => before.get(c.name) !== c.image);
}

export interface PodSecurityCall {
  group: string;
  plural: string;
  ns: string;
  operation: "CREATE" | "UPDATE" | "DELETE";
  sub: string | undefined;
  object: any;
  oldObject: any;
}

/** Judges a write as the PodSecurity admission plugin does: throws its denial, records its warnings. */
export function admitPodSecurity(call: PodSecurityCall, store: Store): void {
  if (call.operation === "DELETE") return;
  if (call.group === "" && call.plural === "namespaces") return admitNamespace(call, store);
  const pod = call.group === "" && call.plural === "pods";
  // A Pod is judged itself; a workload by its pod template (null: it has none yet; undefined: not a workload).
  const template = pod ? call.object : templateOf(call.group, call.plural, call.object);
  if (template === undefined) return;
  // A workload's subresources are never judged; a Pod's are, but for those that cannot change its spec.
  if (call.sub !== undefined && (!pod || IGNORED_POD_SUBRESOURCES.has(call.sub))) return;
  const policy = policyOf(store.get(NAMESPACES, "", call.ns)?.metadata?.labels);
  if (pod) {
    if (call.operation === "UPDATE" && !significant(call.object, call.oldObject)) return;
    const found = violations(policy.enforce.level, call.object?.metadata, call.object?.spec);
    if (found.length > 0) {
      const name = call.object?.metadata?.name ?? "";
      const why = `violates PodSecurity "${named(policy.enforce)}": ${describe(found)}`;
      const message = name ? `pods "${name}" is forbidden: ${why}` : `pods is forbidden: ${why}`;
      throw new ApiStatusError(403, "Forbidden", message, { name, kind: "pods" });
    }
  }
  if (!template) return;
  const warned = violations(policy.warn.level, template.metadata, template.spec);
  if (warned.length > 0) addWarning(`would violate PodSecurity "${named(policy.warn)}": ${describe(warned)}`);
}

function admitNamespace(call: PodSecurityCall, store: Store): void {
  const policy = policyOf(call.object?.metadata?.labels);
  const before = call.operation === "UPDATE" ? policyOf(call.oldObject?.metadata?.labels) : undefined;
  const sameErrors = before !== undefined && JSON.stringify(before.errors) === JSON.stringify(policy.errors);
  if (policy.errors.length > 0 && !(before && before.errors.length > 0 && sameErrors)) {
    throw invalidLabels(call.object?.metadata?.name ?? "", policy.errors);
  }
  if (!before || named(before.enforce) === named(policy.enforce) || policy.enforce.level === "privileged") return;
  const notStricter = LEVELS.indexOf(policy.enforce.level) <= LEVELS.indexOf(before.enforce.level);
  if (before.enforce.version === policy.enforce.version && notStricter) return;
  for (const warning of existingPodWarnings(store, call.object.metadata.name, policy.enforce)) addWarning(warning);
}

function invalidLabels(name: string, errors: Policy["errors"]): ApiStatusError {
  const causes = errors.map((e) => ({
    reason: "FieldValueInvalid", message: `Invalid value: "${e.value}": ${e.why}`, field: `metadata.labels[${e.label}]`,
  }));
  const each = causes.map((c) => `${c.field}: ${c.message}`);
  const message = `Namespace "${name}" is invalid: ${each.length === 1 ? each[0] : `[${each.join(", ")}]`}`;
  return new ApiStatusError(422, "Invalid", message, { name, kind: "Namespace", causes });
}

/**
 * What upstream warns when a namespace's enforce level gets stricter: which Pods already in it
 * break the new level, one line per distinct set of reasons, naming the first Pod by name. Pods
 * of a controller seen already are checked last, so that one workload does not hide the others.
 */
function existingPodWarnings(store: Store, ns: string, enforce: LevelVersion): string[] {
  const pods = store.list(resourceKey("", "pods"), ns).map(({ body }) => body);
  const seen = new Set<string>();
  const firsts: any[] = [], rest: any[] = [];
  for (const pod of pods) {
    const owner = (pod.metadata?.ownerReferences ?? []).find((o: any) => o.controller)?.uid;
    (owner && seen.has(owner) ? rest : firsts).push(pod);
    if (owner) seen.add(owner);
  }
  const byReasons = new Map<string, { first: string; count: number }>();
  for (const pod of [...firsts, ...rest]) {
    const found = violations(enforce.level, pod.metadata, pod.spec);
    if (found.length === 0) continue;
    const reasons = found.map((v) => v.reason).join(", ");
    const entry = byReasons.get(reasons) ?? { first: pod.metadata.name, count: 0 };
    if (pod.metadata.name < entry.first) entry.first = pod.metadata.name;
    entry.count++;
    byReasons.set(reasons, entry);
  }
  if (byReasons.size === 0) return [];
  const others = (n: number) => (n === 1 ? "" : n === 2 ? " (and 1 other pod)" : ` (and ${n - 1} other pods)`);
  const lines = [...byReasons].map(([reasons, { first, count }]) => `${first}${others(count)}: ${reasons}`).sort();
  return [`existing pods in namespace "${ns}" violate the new PodSecurity enforce level "${named(enforce)}"`, ...lines];
}
