// The Pod Security Standards' checks at their latest version (k8s.io/pod-security-admission
// v0.37's policy package, re-expressed): each looks at a pod's metadata and spec and says why
// it is forbidden, in the words kube-apiserver uses, so that a denial reads the same on the
// sandbox as on a real server. Ordered as upstream orders them: baseline checks by id, then
// restricted ones by id; a restricted check may stand in for a baseline one (`replaces`).

export type Level = "privileged" | "baseline" | "restricted";
export interface Violation { reason: string; detail: string }
interface Check { id: string; level: Exclude<Level, "privileged">; replaces?: string; run(meta: any, spec: any): Violation | undefined }

const plural = (one: string, many: string, count: number) => (count === 1 ? one : many);
const quoted = (items: string[]) => (items.length === 0 ? "" : `"${items.join('", "')}"`);
const sorted = (items: Iterable<string>) => [...new Set(items)].sort();
const containerList = (names: string[]) => `${plural("container", "containers", names.length)} ${quoted(names)}`;

/** Init containers, then containers, then ephemeral containers, as upstream visits them. */
function containers(spec: any): any[] {
  return [...(spec.initContainers ?? []), ...(spec.containers ?? []), ...(spec.ephemeralContainers ?? [])];
}
const windows = (spec: any) => spec.os?.name === "windows";
/** A pod in a user namespace of its own: upstream relaxes the run-as-root checks for it. */
const ownUserNamespace = (spec: any) => spec.hostUsers === false;

/** "pod and containers "a", "b"": who set a bad value, pod first. */
function setters(pod: boolean, names: string[]): string[] {
  return [...(pod ? ["pod"] : []), ...(names.length > 0 ? [containerList(names)] : [])];
}

/** A setting read from the pod's and each container's securityContext: who set a value `bad` says is bad, and the bad values. */
function badSettings(spec: any, read: (context: any) => any, bad: (value: any) => boolean): { setters: string[]; values: string[] } {
  const values: string[] = [];
  const shown = (value: any) => (typeof value === "object" && value !== null ? String(value.type ?? "") : String(value));
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
function podOrEveryContainer(spec: any, read: (context: any) => any, good: (value: any) => boolean, must: string, mustNot: string): Violation | undefined {
  const explicit = badSettings(spec, read, (v) => !good(v));
  if (explicit.setters.length > 0) return { reason: "", detail: `${explicit.setters.join(" and ")} ${mustNot.replace("%s", quoted(explicit.values))}` };
  const podValue = read(spec.securityContext ?? {});
  if (podValue !== undefined && good(podValue)) return undefined;
  const implicit = containers(spec).filter((c) => read(c.securityContext ?? {}) === undefined).map((c) => c.name);
  return implicit.length > 0 ? { reason: "", detail: `pod or ${containerList(implicit)} ${must}` } : undefined;
}

function containersWhere(spec: any, bad: (container: any) => boolean): string[] {
  return containers(spec).filter(bad).map((c) => c.name);
}

const DEFAULT_CAPABILITIES = new Set(["AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"]);
const SAFE_SYSCTLS = new Set([
  "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_unprivileged_port_start",
  "net.ipv4.ip_local_reserved_ports", "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes",
  "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem", "net.ipv4.tcp_slow_start_after_idle", "net.ipv4.tcp_notsent_lowat",
]);
const SELINUX_TYPES = new Set(["", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"]);
const RESTRICTED_VOLUMES_ALLOWED = ["configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "image", "persistentVolumeClaim", "projected", "secret"];
const RESTRICTED_VOLUME_TYPES = ["hostPath", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "nfs", "iscsi", "glusterfs", "rbd", "flexVolume", "cinder",
  "cephfs", "flocker", "fc", "azureFile", "vsphereVolume", "quobyte", "azureDisk", "photonPersistentDisk", "portworxVolume", "scaleIO", "storageos"];
const APPARMOR_ANNOTATION = "container.apparmor.security.beta.kubernetes.io/";
const goodSeccomp = (p: any) => p?.type === "RuntimeDefault" || p?.type === "Localhost";

function appArmor(meta: any, spec: any): Violation | undefined {
  const found = badSettings(spec, (c) => c.appArmorProfile, (p) => p?.type !== "RuntimeDefault" && p?.type !== "Localhost");
  const annotations = Object.entries<string>(meta.annotations ?? {})
    .filter(([key, value]) => key.startsWith(APPARMOR_ANNOTATION) && !(value === "" || value === "runtime/default" || value.startsWith("localhost/")))
    .map(([key, value]) => `${key}=${JSON.stringify(value)}`).sort();
  const values = [...found.values, ...annotations];
  const who = [...found.setters, ...(annotations.length > 0 ? [plural("annotation", "annotations", annotations.length)] : [])];
  if (who.length === 0) return undefined;
  return { reason: plural("forbidden AppArmor profile", "forbidden AppArmor profiles", values.length), detail: `${who.join(" and ")} must not set AppArmor profile type to ${quoted(values)}` };
}

function capabilitiesBaseline(_meta: any, spec: any): Violation | undefined {
  const added = containers(spec).map((c) => ({ name: c.name, bad: ((c.securityContext?.capabilities?.add ?? []) as string[]).filter((cap) => !DEFAULT_CAPABILITIES.has(cap)) }));
  const bad = added.filter((c) => c.bad.length > 0);
  if (bad.length === 0) return undefined;
  return { reason: "non-default capabilities", detail: `${containerList(bad.map((c) => c.name))} must not include ${quoted(sorted(bad.flatMap((c) => c.bad)))} in securityContext.capabilities.add` };
}

function capabilitiesRestricted(_meta: any, spec: any): Violation | undefined {
  if (windows(spec)) return undefined;
  const noDropAll = containersWhere(spec, (c) => !(c.securityContext?.capabilities?.drop ?? []).includes("ALL"));
  const adding = containers(spec).map((c) => ({ name: c.name, bad: ((c.securityContext?.capabilities?.add ?? []) as string[]).filter((cap) => cap !== "NET_BIND_SERVICE") }))
    .filter((c) => c.bad.length > 0);
  const details = [
    ...(noDropAll.length > 0 ? [`${containerList(noDropAll)} must set securityContext.capabilities.drop=["ALL"]`] : []),
    ...(adding.length > 0 ? [`${containerList(adding.map((c) => c.name))} must not include ${quoted(sorted(adding.flatMap((c) => c.bad)))} in securityContext.capabilities.add`] : []),
  ];
  return details.length > 0 ? { reason: "unrestricted capabilities", detail: details.join("; ") } : undefined;
}

/**
 * Containers that use a forbidden value, and the values (hostPorts, probe hosts): "container "a"
 * uses hostPort 80". Upstream names the containers in visiting order for one check, sorted for the other.
 */
function usesForbidden(spec: any, valuesOf: (c: any) => string[], what: { one: string; many: string; sortNames: boolean }, format: (values: string[]) => string): string | undefined {
  const used = containers(spec).map((c) => ({ name: c.name, values: valuesOf(c) })).filter((c) => c.values.length > 0);
  if (used.length === 0) return undefined;
  const values = sorted(used.flatMap((c) => c.values));
  const names = used.map((c) => c.name);
  return `${containerList(what.sortNames ? sorted(names) : names)} ${plural("uses", "use", used.length)} ${plural(what.one, what.many, values.length)} ${format(values)}`;
}

function hostHandlers(c: any): string[] {
  const handlers = [c.livenessProbe, c.readinessProbe, c.startupProbe, c.lifecycle?.postStart, c.lifecycle?.preStop];
  return handlers.flatMap((h) => [h?.httpGet?.host, h?.tcpSocket?.host]).filter((host): host is string => !!host);
}

function procMount(_meta: any, spec: any): Violation | undefined {
  const bad = containers(spec).filter((c) => c.securityContext?.procMount !== undefined && c.securityContext.procMount !== "Default");
  if (bad.length === 0) return undefined;
  return { reason: "procMount", detail: `${containerList(bad.map((c) => c.name))} must not set securityContext.procMount to ${quoted(sorted(bad.map((c) => c.securityContext.procMount)))}` };
}

function seLinux(_meta: any, spec: any): Violation | undefined {
  const types: string[] = [];
  let user = false, role = false;
  const bad = (o: any) => {
    const badType = !SELINUX_TYPES.has(o.type ?? "");
    if (badType) types.push(o.type);
    if (o.user) user = true;
    if (o.role) role = true;
    return badType || !!o.user || !!o.role;
  };
  const pod = spec.securityContext?.seLinuxOptions !== undefined && bad(spec.securityContext.seLinuxOptions);
  const names = containersWhere(spec, (c) => c.securityContext?.seLinuxOptions !== undefined && bad(c.securityContext.seLinuxOptions));
  const who = setters(pod, names);
  if (who.length === 0) return undefined;
  const what = [...(types.length > 0 ? [`${plural("type", "types", sorted(types).length)} ${quoted(sorted(types))}`] : []), ...(user ? ["user may not be set"] : []), ...(role ? ["role may not be set"] : [])];
  return { reason: "seLinuxOptions", detail: `${who.join(" and ")} set forbidden securityContext.seLinuxOptions: ${what.join("; ")}` };
}

function restrictedVolumes(_meta: any, spec: any): Violation | undefined {
  const bad = ((spec.volumes ?? []) as any[]).filter((v) => !RESTRICTED_VOLUMES_ALLOWED.some((k) => v[k] != null) && RESTRICTED_VOLUME_TYPES.some((k) => v[k] != null));
  if (bad.length === 0) return undefined;
  const types = sorted(bad.map((v) => RESTRICTED_VOLUME_TYPES.find((k) => v[k] != null)!));
  const names = bad.map((v) => v.name);
  return { reason: "restricted volume types", detail: `${plural("volume", "volumes", names.length)} ${quoted(names)} ${plural("uses", "use", names.length)} ${plural("restricted volume type", "restricted volume types", types.length)} ${quoted(types)}` };
}

function runAsUser(_meta: any, spec: any): Violation | undefined {
  if (ownUserNamespace(spec)) return undefined;
  const who = setters(spec.securityContext?.runAsUser === 0, containersWhere(spec, (c) => c.securityContext?.runAsUser === 0));
  return who.length > 0 ? { reason: "runAsUser=0", detail: `${who.join(" and ")} must not set runAsUser=0` } : undefined;
}

const named = (reason: string, violation: Violation | undefined) => (violation ? { ...violation, reason } : undefined);
const when = (bad: boolean, reason: string, detail: string) => (bad ? { reason, detail } : undefined);

const CHECKS: Check[] = [
  { id: "appArmorProfile", level: "baseline", run: appArmor },
  { id: "capabilities_baseline", level: "baseline", run: capabilitiesBaseline },
  {
    id: "hostNamespaces", level: "baseline",
    run: (_m, s) => { const on = (["hostNetwork", "hostPID", "hostIPC"] as const).filter((k) => s[k] === true).map((k) => `${k}=true`); return when(on.length > 0, "host namespaces", on.join(", ")); },
  },
  {
    id: "hostPathVolumes", level: "baseline",
    run: (_m, s) => { const names = ((s.volumes ?? []) as any[]).filter((v) => v.hostPath != null).map((v) => v.name); return when(names.length > 0, "hostPath volumes", `${plural("volume", "volumes", names.length)} ${quoted(names)}`); },
  },
  {
    id: "hostPorts", level: "baseline",
    run: (_m, s) => { const detail = usesForbidden(s, (c) => ((c.ports ?? []) as any[]).filter((p) => p.hostPort).map((p) => String(p.hostPort)), { one: "hostPort", many: "hostPorts", sortNames: false }, (v) => v.join(", ")); return when(!!detail, "hostPort", detail!); },
  },
  {
    id: "hostProbesAndHostLifecycle", level: "baseline",
    run: (_m, s) => { const detail = usesForbidden(s, hostHandlers, { one: "probe or lifecycle host", many: "probe or lifecycle hosts", sortNames: true }, quoted); return when(!!detail, "probe or lifecycle host", detail!); },
  },
  {
    id: "privileged", level: "baseline",
    run: (_m, s) => { const names = containersWhere(s, (c) => c.securityContext?.privileged === true); return when(names.length > 0, "privileged", `${containerList(names)} must not set securityContext.privileged=true`); },
  },
  { id: "procMount", level: "baseline", run: (m, s) => (ownUserNamespace(s) ? undefined : procMount(m, s)) },
  { id: "seLinuxOptions", level: "baseline", run: seLinux },
  {
    id: "seccompProfile_baseline", level: "baseline",
    run: (_m, s) => { const bad = badSettings(s, (c) => c.seccompProfile, (p) => !goodSeccomp(p)); return when(bad.setters.length > 0, "seccompProfile", `${bad.setters.join(" and ")} must not set securityContext.seccompProfile.type to ${quoted(bad.values)}`); },
  },
  {
    id: "sysctls", level: "baseline",
    run: (_m, s) => { const bad = ((s.securityContext?.sysctls ?? []) as any[]).map((x) => x.name).filter((n) => !SAFE_SYSCTLS.has(n)); return when(bad.length > 0, "forbidden sysctls", bad.join(", ")); },
  },
  {
    id: "windowsHostProcess", level: "baseline",
    run: (_m, s) => {
      const who = setters(s.securityContext?.windowsOptions?.hostProcess === true, containersWhere(s, (c) => c.securityContext?.windowsOptions?.hostProcess === true));
      return when(who.length > 0, "hostProcess", `${who.join(" and ")} must not set securityContext.windowsOptions.hostProcess=true`);
    },
  },
  {
    id: "allowPrivilegeEscalation", level: "restricted",
    run: (_m, s) => { const names = windows(s) ? [] : containersWhere(s, (c) => c.securityContext?.allowPrivilegeEscalation !== false); return when(names.length > 0, "allowPrivilegeEscalation != false", `${containerList(names)} must set securityContext.allowPrivilegeEscalation=false`); },
  },
  { id: "capabilities_restricted", level: "restricted", replaces: "capabilities_baseline", run: capabilitiesRestricted },
  { id: "procMount_restricted", level: "restricted", replaces: "procMount", run: procMount },
  { id: "restrictedVolumes", level: "restricted", replaces: "hostPathVolumes", run: restrictedVolumes },
  {
    id: "runAsNonRoot", level: "restricted",
    run: (_m, s) => ownUserNamespace(s) ? undefined : named("runAsNonRoot != true", podOrEveryContainer(s, (c) => c.runAsNonRoot, (v) => v === true, "must set securityContext.runAsNonRoot=true", "must not set securityContext.runAsNonRoot=false")),
  },
  { id: "runAsUser", level: "restricted", run: runAsUser },
  {
    id: "seccompProfile_restricted", level: "restricted", replaces: "seccompProfile_baseline",
    run: (_m, s) => windows(s) ? undefined : named("seccompProfile", podOrEveryContainer(s, (c) => c.seccompProfile, goodSeccomp, 'must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"', "must not set securityContext.seccompProfile.type to %s")),
  },
];

const RESTRICTED = CHECKS.filter((c) => c.level === "baseline" && !CHECKS.some((r) => r.replaces === c.id)).concat(CHECKS.filter((c) => c.level === "restricted"));
const BASELINE = CHECKS.filter((c) => c.level === "baseline");

/** What `level` forbids in this pod (metadata and spec), in upstream's order; empty when it is allowed. */
export function violations(level: Level, meta: any, spec: any): Violation[] {
  const checks = level === "restricted" ? RESTRICTED : level === "baseline" ? BASELINE : [];
  return checks.flatMap((check) => check.run(meta ?? {}, spec ?? {}) ?? []);
}

/** upstream's ForbiddenDetail: "reason (detail), reason (detail)". */
export function describe(found: Violation[]): string {
  return found.map((v) => (v.detail ? `${v.reason} (${v.detail})` : v.reason)).join(", ");
}
