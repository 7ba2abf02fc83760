// What the Pod Security checks (pod-security-checks.ts) find in a pod and how they word it, as
// upstream's policy package does: who set a value (the pod, then its containers in the order
// upstream visits them), which values, and the phrases ("containers "a", "b"", "uses hostPort
// 80") that make a denial read the same on the sandbox as on a real server.

export interface Violation { reason: string; detail: string }

export const plural = (one: string, many: string, count: number) => (count === 1 ? one : many);
export const quoted = (items: string[]) => (items.length === 0 ? "" : `"${items.join('", "')}"`);
export const sorted = (items: Iterable<string>) => [...new Set(items)].sort();
export const containerList = (names: string[]) => `${plural("container", "containers", names.length)} ${quoted(names)}`;

/** Init containers, then containers, then ephemeral containers, as upstream visits them. */
export function containers(spec: any): any[] {
  return [...(spec.initContainers ?? []), ...(spec.containers ?? []), ...(spec.ephemeralContainers ?? [])];
}
export const windows = (spec: any) => spec.os?.name === "windows";
/** A pod in a user namespace of its own: upstream relaxes the run-as-root checks for it. */
export const ownUserNamespace = (spec: any) => spec.hostUsers === false;

/** "pod and containers "a", "b"": who set a bad value, pod first. */
export function setters(pod: boolean, names: string[]): string[] {
  return [...(pod ? ["pod"] : []), ...(names.length > 0 ? [containerList(names)] : [])];
}

/**
 * A setting read from the pod's and each container's securityContext: who set a value `bad` says is bad, and the
 * bad values.
 */
export function badSettings(
  spec: any, read: (context: any) => any, bad: (value: any) => boolean,
): { setters: string[]; values: string[] } {
  const values: string[] = [];
  const shown = (value: any) =>
    typeof value === "object" && value !== null ? String(value.type ?? "") : String(value);
  const podValue = read(spec.securityContext ?? {});
  const pod = podValue !== undefined && bad(podValue);
  if (pod) values.push(shown(podValue));
  const names = containers(spec).filter((c) => {
    const value = read(c.securityContext ?? {});
    if (value === undefined || !bad(value)) return false;
    values.push(shown(value));
    return true;
  }).map((c) => c.name);
  return { setters: setters(pod, names), values: sorted(values) };
}

/** Containers whose value is missing or bad, unless the pod's own value covers them (runAsNonRoot, seccompProfile). */
export function podOrEveryContainer(
  spec: any, read: (context: any) => any, good: (value: any) => boolean, must: string, mustNot: string,
): Violation | undefined {
  const explicit = badSettings(spec, read, (v) => !good(v));
  if (explicit.setters.length > 0) {
    const detail = `${explicit.setters.join(" and ")} ${mustNot.replace("%s", quoted(explicit.values))}`;
    return { reason: "", detail };
  }
  const podValue = read(spec.securityContext ?? {});
  if (podValue !== undefined && good(podValue)) return undefined;
  const implicit = containers(spec).filter((c) => read(c.securityContext ?? {}) === undefined).map((c) => c.name);
  return implicit.length > 0 ? { reason: "", detail: `pod or ${containerList(implicit)} ${must}` } : undefined;
}

export function containersWhere(spec: any, bad: (container: any) => boolean): string[] {
  return containers(spec).filter(bad).map((c) => c.name);
}

/**
 * Containers that use a forbidden value, and the values (hostPorts, probe hosts): "container "a"
 * uses hostPort 80". Upstream names the containers in visiting order for one check, sorted for the other.
 */
export function usesForbidden(
  spec: any, valuesOf: (c: any) => string[], what: { one: string; many: string; sortNames: boolean },
  format: (values: string[]) => string,
): string | undefined {
  const used = containers(spec).map((c) => ({ name: c.name, values: valuesOf(c) })).filter((c) => c.values.length > 0);
  if (used.length === 0) return undefined;
  const values = sorted(used.flatMap((c) => c.values));
  const names = used.map((c) => c.name);
  const who = containerList(what.sortNames ? sorted(names) : names);
  return `${who} ${plural("uses", "use", used.length)} ${plural(what.one, what.many, values.length)} ${format(values)}`;
}

export const named = (reason: string, violation: Violation | undefined) =>
  violation ? { ...violation, reason } : undefined;
export const when = (bad: boolean, reason: string, detail: string) => (bad ? { reason, detail } : undefined);
