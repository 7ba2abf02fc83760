// The Pod Security Standards' checks at their latest version (k8s.io/pod-security-admission
// v0.37's policy package, re-expressed): each looks at a pod's metadata and spec and says why
// it is forbidden, in the words kube-apiserver uses, so that a denial reads the same on the
// sandbox as on a real server. Ordered as upstream orders them: baseline checks by id, then
// restricted ones by id; a restricted check may stand in for a baseline one (`replaces`).

import {
  badSettings, containerList, containers, containersWhere, named, ownUserNamespace, plural, podOrEveryContainer, quoted,
  setters, sorted, usesForbidden, when, windows, type Violation,
} from "./pod-security-findings.ts";

export type Level = "privileged" | "baseline" | "restricted";
interface Check {
  id: string; level: Exclude<Level, "privileged">; replaces?: string;
  run(meta: any, spec: any): Violation | undefined;
}

const DEFAULT_CAPABILITIES = new Set([
  "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE", "SETFCAP", "SETGID",
  "SETPCAP", "SETUID", "SYS_CHROOT",
]);
const SAFE_SYSCTLS = new Set([
  "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range",
  "net.ipv4.ip_unprivileged_port_start", "net.ipv4.ip_local_reserved_ports", "net.ipv4.tcp_keepalive_time",
  "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes",
  "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem", "net.ipv4.tcp_slow_start_after_idle", "net.ipv4.tcp_notsent_lowat",
]);
const SELINUX_TYPES = new Set(["", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"]);
const RESTRICTED_VOLUMES_ALLOWED = [
  "configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "image", "persistentVolumeClaim", "projected", "secret",
];
const RESTRICTED_VOLUME_TYPES = [
  "hostPath", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "nfs", "iscsi", "glusterfs", "rbd", "flexVolume",
  "cinder", "cephfs", "flocker", "fc", "azureFile", "vsphereVolume", "quobyte", "azureDisk", "photonPersistentDisk",
  "portworxVolume", "scaleIO", "storageos",
];
const APPARMOR_ANNOTATION = "container.apparmor.security.beta.kubernetes.io/";
const goodSeccomp = (p: any) => p?.type === "RuntimeDefault" || p?.type === "Localhost";

function appArmor(meta: any, spec: any): Violation | undefined {
  const found = badSettings(
    spec, (c) => c.appArmorProfile, (p) => p?.type !== "RuntimeDefault" && p?.type !== "Localhost",
  );
  const allowed = (value: string) => value === "" || value === "runtime/default" || value.startsWith("localhost/");
  const annotations = Object.entries<string>(meta.annotations ?? {})
    .filter(([key, value]) => key.startsWith(APPARMOR_ANNOTATION) && !allowed(value))
    .map(([key, value]) => `${key}=${JSON.stringify(value)}`).sort();
  const values = [...found.values, ...annotations];
  const annotated = annotations.length > 0 ? [plural("annotation", "annotations", annotations.length)] : [];
  const who = [...found.setters, ...annotated];
  if (who.length === 0) return undefined;
  return {
    reason: plural("forbidden AppArmor profile", "forbidden AppArmor profiles", values.length),
    detail: `${who.join(" and ")} must not set AppArmor profile type to ${quoted(values)}`,
  };
}

function capabilitiesBaseline(_meta: any, spec: any): Violation | undefined {
  const bad = addedCapabilities(spec, (cap) => !DEFAULT_CAPABILITIES.has(cap));
  if (bad.length === 0) return undefined;
  return { reason: "non-default capabilities", detail: mustNotAdd(bad) };
}

function capabilitiesRestricted(_meta: any, spec: any): Violation | undefined {
  if (windows(spec)) return undefined;
  const noDropAll = containersWhere(spec, (c) => !(c.securityContext?.capabilities?.drop ?? []).includes("ALL"));
  const adding = addedCapabilities(spec, (cap) => cap !== "NET_BIND_SERVICE");
  const details = [
    ...(noDropAll.length > 0 ? [`${containerList(noDropAll)} must set securityContext.capabilities.drop=["ALL"]`] : []),
    ...(adding.length > 0 ? [mustNotAdd(adding)] : []),
  ];
  return details.length > 0 ? { reason: "unrestricted capabilities", detail: details.join("; ") } : undefined;
}

/** Each container that adds capabilities `bad` says are bad, with those it adds. */
function addedCapabilities(spec: any, bad: (capability: string) => boolean): { name: string; bad: string[] }[] {
  return containers(spec)
    .map((c) => ({ name: c.name, bad: ((c.securityContext?.capabilities?.add ?? []) as string[]).filter(bad) }))
    .filter((c) => c.bad.length > 0);
}

const mustNotAdd = (bad: { name: string; bad: string[] }[]) => `${containerList(bad.map((c) => c.name))} must not ` +
  `include ${quoted(sorted(bad.flatMap((c) => c.bad)))} in securityContext.capabilities.add`;

function procMount(_meta: any, spec: any): Violation | undefined {
  const mount = (c: any) => c.securityContext?.procMount;
  const bad = containers(spec).filter((c) => mount(c) !== undefined && mount(c) !== "Default");
  if (bad.length === 0) return undefined;
  const detail = `${containerList(bad.map((c) => c.name))} must not set securityContext.procMount to ` +
    quoted(sorted(bad.map(mount)));
  return { reason: "procMount", detail };
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
  const badIn = (context: any) => context?.seLinuxOptions !== undefined && bad(context.seLinuxOptions);
  const pod = badIn(spec.securityContext);
  const names = containersWhere(spec, (c) => badIn(c.securityContext));
  const who = setters(pod, names);
  if (who.length === 0) return undefined;
  const what = [
    ...(types.length > 0 ? [`${plural("type", "types", sorted(types).length)} ${quoted(sorted(types))}`] : []),
    ...(user ? ["user may not be set"] : []), ...(role ? ["role may not be set"] : []),
  ];
  const detail = `${who.join(" and ")} set forbidden securityContext.seLinuxOptions: ${what.join("; ")}`;
  return { reason: "seLinuxOptions", detail };
}

function restrictedVolumes(_meta: any, spec: any): Violation | undefined {
  const bad = ((spec.volumes ?? []) as any[]).filter(
    (v) => !RESTRICTED_VOLUMES_ALLOWED.some((k) => v[k] != null) && RESTRICTED_VOLUME_TYPES.some((k) => v[k] != null),
  );
  if (bad.length === 0) return undefined;
  const types = sorted(bad.map((v) => RESTRICTED_VOLUME_TYPES.find((k) => v[k] != null)!));
  const names = bad.map((v) => v.name);
  const detail = `${plural("volume", "volumes", names.length)} ${quoted(names)} ` +
    `${plural("uses", "use", names.length)} ` +
    `${plural("restricted volume type", "restricted volume types", types.length)} ${quoted(types)}`;
  return { reason: "restricted volume types", detail };
}

function runAsUser(_meta: any, spec: any): Violation | undefined {
  if (ownUserNamespace(spec)) return undefined;
  const root = (context: any) => context?.runAsUser === 0;
  const who = setters(root(spec.securityContext), containersWhere(spec, (c) => root(c.securityContext)));
  return when(who.length > 0, "runAsUser=0", `${who.join(" and ")} must not set runAsUser=0`);
}

function hostNamespaces(_meta: any, spec: any): Violation | undefined {
  const on = (["hostNetwork", "hostPID", "hostIPC"] as const).filter((k) => spec[k] === true).map((k) => `${k}=true`);
  return when(on.length > 0, "host namespaces", on.join(", "));
}

function hostPathVolumes(_meta: any, spec: any): Violation | undefined {
  const names = ((spec.volumes ?? []) as any[]).filter((v) => v.hostPath != null).map((v) => v.name);
  return when(names.length > 0, "hostPath volumes", `${plural("volume", "volumes", names.length)} ${quoted(names)}`);
}

function hostPorts(_meta: any, spec: any): Violation | undefined {
  const ports = (c: any) => ((c.ports ?? []) as any[]).filter((p) => p.hostPort).map((p) => String(p.hostPort));
  const what = { one: "hostPort", many: "hostPorts", sortNames: false };
  const detail = usesForbidden(spec, ports, what, (v) => v.join(", "));
  return when(!!detail, "hostPort", detail!);
}

function hostHandlers(c: any): string[] {
  const handlers = [c.livenessProbe, c.readinessProbe, c.startupProbe, c.lifecycle?.postStart, c.lifecycle?.preStop];
  return handlers.flatMap((h) => [h?.httpGet?.host, h?.tcpSocket?.host]).filter((host): host is string => !!host);
}

function hostProbesAndHostLifecycle(_meta: any, spec: any): Violation | undefined {
  const what = { one: "probe or lifecycle host", many: "probe or lifecycle hosts", sortNames: true };
  const detail = usesForbidden(spec, hostHandlers, what, quoted);
  return when(!!detail, "probe or lifecycle host", detail!);
}

function privileged(_meta: any, spec: any): Violation | undefined {
  const names = containersWhere(spec, (c) => c.securityContext?.privileged === true);
  return when(names.length > 0, "privileged", `${containerList(names)} must not set securityContext.privileged=true`);
}

function seccompBaseline(_meta: any, spec: any): Violation | undefined {
  const bad = badSettings(spec, (c) => c.seccompProfile, (p) => !goodSeccomp(p));
  const detail =
    `${bad.setters.join(" and ")} must not set securityContext.seccompProfile.type to ${quoted(bad.values)}`;
  return when(bad.setters.length > 0, "seccompProfile", detail);
}

function sysctls(_meta: any, spec: any): Violation | undefined {
  const bad = ((spec.securityContext?.sysctls ?? []) as any[]).map((x) => x.name).filter((n) => !SAFE_SYSCTLS.has(n));
  return when(bad.length > 0, "forbidden sysctls", bad.join(", "));
}

function windowsHostProcess(_meta: any, spec: any): Violation | undefined {
  const hostProcess = (context: any) => context?.windowsOptions?.hostProcess === true;
  const who = setters(hostProcess(spec.securityContext), containersWhere(spec, (c) => hostProcess(c.securityContext)));
  const detail = `${who.join(" and ")} must not set securityContext.windowsOptions.hostProcess=true`;
  return when(who.length > 0, "hostProcess", detail);
}

function allowPrivilegeEscalation(_meta: any, spec: any): Violation | undefined {
  const escalates = (c: any) => c.securityContext?.allowPrivilegeEscalation !== false;
  const names = windows(spec) ? [] : containersWhere(spec, escalates);
  const detail = `${containerList(names)} must set securityContext.allowPrivilegeEscalation=false`;
  return when(names.length > 0, "allowPrivilegeEscalation != false", detail);
}

function runAsNonRoot(_meta: any, spec: any): Violation | undefined {
  if (ownUserNamespace(spec)) return undefined;
  return named("runAsNonRoot != true", podOrEveryContainer(spec, (c) => c.runAsNonRoot, (v) => v === true,
    "must set securityContext.runAsNonRoot=true", "must not set securityContext.runAsNonRoot=false"));
}

function seccompRestricted(_meta: any, spec: any): Violation | undefined {
  if (windows(spec)) return undefined;
  return named("seccompProfile", podOrEveryContainer(spec, (c) => c.seccompProfile, goodSeccomp,
    'must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"',
    "must not set securityContext.seccompProfile.type to %s"));
}

const CHECKS: Check[] = [
  { id: "appArmorProfile", level: "baseline", run: appArmor },
  { id: "capabilities_baseline", level: "baseline", run: capabilitiesBaseline },
  { id: "hostNamespaces", level: "baseline", run: hostNamespaces },
  { id: "hostPathVolumes", level: "baseline", run: hostPathVolumes },
  { id: "hostPorts", level: "baseline", run: hostPorts },
  { id: "hostProbesAndHostLifecycle", level: "baseline", run: hostProbesAndHostLifecycle },
  { id: "privileged", level: "baseline", run: privileged },
  { id: "procMount", level: "baseline", run: (m, s) => (ownUserNamespace(s) ? undefined : procMount(m, s)) },
  { id: "seLinuxOptions", level: "baseline", run: seLinux },
  { id: "seccompProfile_baseline", level: "baseline", run: seccompBaseline },
  { id: "sysctls", level: "baseline", run: sysctls },
  { id: "windowsHostProcess", level: "baseline", run: windowsHostProcess },
  { id: "allowPrivilegeEscalation", level: "restricted", run: allowPrivilegeEscalation },
  {
    id: "capabilities_restricted", level: "restricted", replaces: "capabilities_baseline", run: capabilitiesRestricted,
  },
  { id: "procMount_restricted", level: "restricted", replaces: "procMount", run: procMount },
  { id: "restrictedVolumes", level: "restricted", replaces: "hostPathVolumes", run: restrictedVolumes },
  { id: "runAsNonRoot", level: "restricted", run: runAsNonRoot },
  { id: "runAsUser", level: "restricted", run: runAsUser },
  { id: "seccompProfile_restricted", level: "restricted", replaces: "seccompProfile_baseline", run: seccompRestricted },
];

const RESTRICTED = CHECKS.filter((c) => c.level === "baseline" && !CHECKS.some((r) => r.replaces === c.id))
  .concat(CHECKS.filter((c) => c.level === "restricted"));
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
