// `kobun manifests`: its output applies cleanly to an API server, and its RBAC is derived
// from the handlers (least privilege: the handled resources, their status, events, peering).

import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse, parseAllDocuments } from "yaml";
import { parseRunFlags, resolveSettings } from "../../../src/config/index.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";

const repo = join(import.meta.dir, "../../..");
let sandbox: Sandbox;
beforeAll(async () => (sandbox = await startSandbox()));
afterAll(() => sandbox.stop());

function manifests(args: string[]): { code: number; docs: any[]; stderr: string } {
  const result = Bun.spawnSync([process.execPath, join(repo, "src/cli.ts"), "manifests", ...args], {
    cwd: repo, env: { PATH: process.env.PATH ?? "", HOME: "/nonexistent" },
  });
  const text = result.stdout.toString();
  return { code: result.exitCode, docs: parseAllDocuments(text).map((d) => d.toJS()), stderr: result.stderr.toString() };
}

/** The collection URL for a manifest, found through discovery as kubectl does. */
async function collectionPath(doc: any): Promise<string> {
  const [group, version] = doc.apiVersion.includes("/") ? doc.apiVersion.split("/") : ["", doc.apiVersion];
  const base = group ? `/apis/${group}/${version}` : `/api/${version}`;
  const list = (await (await fetch(`${sandbox.url}${base}`)).json()) as { resources: { name: string; kind: string; namespaced: boolean }[] };
  const resource = list.resources.find((r) => r.kind === doc.kind && !r.name.includes("/"));
  if (!resource) throw new Error(`${doc.apiVersion} ${doc.kind} is not served`);
  return resource.namespaced ? `${base}/namespaces/${doc.metadata.namespace ?? "default"}/${resource.name}` : `${base}/${resource.name}`;
}

test("cluster-wide manifests: CRDs, peering CRDs, ClusterRole from the handlers, Deployment; all apply", async () => {
  const { code, docs, stderr } = manifests(["-A", "--image", "example/op:1", "--name", "example-op"]);
  expect(stderr).toBe("");
  expect(code).toBe(0);
  const kinds = docs.map((d) => `${d.kind}/${d.metadata.name}`);
  expect(kinds).toEqual([
    "CustomResourceDefinition/kobunexamples.kobun.dev",
    "CustomResourceDefinition/clusterkobunpeerings.kobun.dev",
    "CustomResourceDefinition/kobunpeerings.kobun.dev",
    "ServiceAccount/example-op",
    "ClusterRole/example-op",
    "ClusterRoleBinding/example-op",
    "Deployment/example-op",
  ]);
  const role = docs.find((d) => d.kind === "ClusterRole");
  expect(role.rules).toContainEqual({ apiGroups: ["kobun.dev"], resources: ["kobunexamples"], verbs: ["get", "list", "watch", "patch"] });
  expect(role.rules).toContainEqual({ apiGroups: ["kobun.dev"], resources: ["kobunexamples/status"], verbs: ["patch"] });
  expect(role.rules).toContainEqual({ apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] });
  // Least privilege: nothing cluster-admin-like, no wildcard.
  expect(JSON.stringify(role.rules)).not.toContain("*");
  const deployment = docs.find((d) => d.kind === "Deployment");
  expect(deployment.spec.template.spec.containers[0].image).toBe("example/op:1");
  expect(deployment.spec.template.spec.containers[0].args).toContain("--all-namespaces");

  for (const doc of docs) {
    const response = await fetch(`${sandbox.url}${await collectionPath(doc)}`, {
      method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(doc),
    });
    expect({ kind: doc.kind, status: response.status }).toEqual({ kind: doc.kind, status: 201 });
  }
  // The applied CRD is served at once: the operator's resource exists.
  expect((await fetch(`${sandbox.url}/apis/kobun.dev/v1/namespaces/default/kobunexamples`)).status).toBe(200);
}, 20_000);

test("namespaced manifests: a Role and RoleBinding per namespace, no ClusterRole", () => {
  const { code, docs } = manifests(["-n", "team-a", "-n", "team-b", "--standalone"]);
  expect(code).toBe(0);
  const kinds = docs.map((d) => `${d.kind}/${d.metadata.namespace ?? ""}`);
  expect(kinds.filter((k) => k.startsWith("Role/"))).toEqual(["Role/team-a", "Role/team-b"]);
  expect(kinds.some((k) => k.startsWith("ClusterRole"))).toBe(false);
  expect(kinds.some((k) => k.includes("Peering"))).toBe(false); // standalone: no peering CRDs
}, 20_000);

test("more fixed namespaces than watching.clusterWideAbove: list/watch is granted cluster-wide (ClusterRole + binding)", () => {
  // The operator then watches each resource once cluster-wide; a Role per namespace could not allow it.
  const namespaces = Array.from({ length: 51 }, (_, i) => `ns-${i}`);
  const { code, docs } = manifests([...namespaces.flatMap((ns) => ["-n", ns]), "--standalone"]);
  expect(code).toBe(0);
  const kinds = docs.map((d) => d.kind);
  expect(kinds.filter((k) => k === "Role" || k === "RoleBinding")).toEqual([]);
  expect(kinds.filter((k) => k === "ClusterRole" || k === "ClusterRoleBinding")).toEqual(["ClusterRole", "ClusterRoleBinding"]);
  const rules = docs.find((d) => d.kind === "ClusterRole").rules as { verbs: string[] }[];
  expect(rules.some((r) => r.verbs.includes("list") && r.verbs.includes("watch"))).toBe(true);
  const deployment = docs.find((d) => d.kind === "Deployment");
  expect(deployment.spec.template.spec.containers[0].args).toContain("--namespace=ns-50");
}, 20_000);

/** The RBAC documents by kind, namespace and name, with their rules as "group/resource:verbs" strings. */
function grants(docs: any[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const d of docs.filter((d) => d.kind === "Role" || d.kind === "ClusterRole")) {
    out[`${d.kind}/${d.metadata.namespace ? `${d.metadata.namespace}/` : ""}${d.metadata.name}`] = d.rules
      .flatMap((r: any) => r.apiGroups.flatMap((g: string) => r.resources.map((res: string) => `${g}/${res}:${r.verbs.join(",")}`)));
  }
  return out;
}

function withConfig(yaml: string): { path: string; [Symbol.dispose](): void } {
  const dir = mkdtempSync(join(tmpdir(), "kobun-manifests-"));
  const path = join(dir, "kobun.yaml");
  writeFileSync(path, yaml);
  return { path, [Symbol.dispose]: () => rmSync(dir, { recursive: true, force: true }) };
}

test("globs: a ClusterRole + ClusterRoleBinding (a Role cannot be in namespace 'team-*'), with list/watch of namespaces", () => {
  const { code, docs, stderr } = manifests(["-n", "team-*", "-n", "ops", "--name", "op"]);
  expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
  expect(docs.filter((d) => /^Role/.test(d.kind))).toEqual([]);
  const binding = docs.find((d) => d.kind === "ClusterRoleBinding");
  expect(binding.roleRef).toEqual({ apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "op" });
  expect(binding.subjects).toEqual([{ kind: "ServiceAccount", name: "op", namespace: "default" }]);
  expect(grants(docs)).toEqual({
    "ClusterRole/op": [
      "kobun.dev/kobunexamples:get,list,watch,patch", "kobun.dev/kobunexamples/status:patch",
      "kobun.dev/kobunexamples/finalizers:update", // adopt's blockOwnerDeletion (rbac.ts)
      // handlers/children.ts declares { children: ["configmaps", "apps/v1/deployments"] }
      "/configmaps:get,list,watch,create,update,patch,delete", "apps/deployments:get,list,watch,create,update,patch,delete",
      "/events:create,patch",
      "kobun.dev/kobunpeerings:get,list,watch,create,patch", "kobun.dev/kobunpeerings/status:patch",
      "/namespaces:list,watch",
    ],
  });
  // Nothing of a namespace that is not a name
  expect(docs.filter((d) => /[*?]/.test(d.metadata.namespace ?? ""))).toEqual([]);
}, 20_000);

test("fixed namespaces: cluster-scoped grants (cluster-wide peering) go to a ClusterRole, never into a Role", () => {
  using config = withConfig("peering:\n  clusterwide: true\n");
  const { code, docs } = manifests(["--config", config.path, "-n", "team-a", "-n", "team-b", "--name", "op"]);
  expect(code).toBe(0);
  const namespaced = [
    "kobun.dev/kobunexamples:get,list,watch,patch", "kobun.dev/kobunexamples/status:patch",
    "kobun.dev/kobunexamples/finalizers:update",
    "/configmaps:get,list,watch,create,update,patch,delete", "apps/deployments:get,list,watch,create,update,patch,delete",
    "/events:create,patch",
  ];
  expect(grants(docs)).toEqual({
    "ClusterRole/op": ["kobun.dev/clusterkobunpeerings:get,list,watch,create,patch", "kobun.dev/clusterkobunpeerings/status:patch"],
    "Role/team-a/op": namespaced,
    "Role/team-b/op": namespaced,
  });
  expect(docs.filter((d) => d.kind === "RoleBinding").map((d) => `${d.metadata.namespace}/${d.roleRef.kind}/${d.roleRef.name}`))
    .toEqual(["team-a/Role/op", "team-b/Role/op"]);
  expect(docs.find((d) => d.kind === "ClusterRoleBinding").roleRef.name).toBe("op");
}, 20_000);

test("lease mode: the Lease is granted in the operator's namespace only (where the Deployment's POD_NAMESPACE puts it)", () => {
  using config = withConfig("peering:\n  mode: lease\n");
  for (const args of [["-A"], ["-n", "team-a"], ["-n", "team-*"]]) {
    const { code, docs } = manifests(["--config", config.path, ...args, "--name", "op", "--operator-namespace", "ops"]);
    expect(code).toBe(0);
    const all = grants(docs);
    expect(all["Role/ops/op-lease"]).toEqual(["coordination.k8s.io/leases:get,list,watch,create,update"]);
    const elsewhere = Object.entries(all).filter(([k, rules]) => k !== "Role/ops/op-lease" && rules.some((r) => r.includes("leases")));
    expect(elsewhere).toEqual([]);
    const binding = docs.find((d) => d.kind === "RoleBinding" && d.metadata.name === "op-lease");
    expect(binding.metadata.namespace).toBe("ops");
    expect(binding.subjects).toEqual([{ kind: "ServiceAccount", name: "op", namespace: "ops" }]);
    const env = docs.find((d) => d.kind === "Deployment").spec.template.spec.containers[0].env;
    expect(env).toContainEqual({ name: "POD_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } });
  }
}, 30_000);

test("the Deployment meets Pod Security 'restricted': non-root, no escalation, ALL capabilities dropped, RuntimeDefault seccomp", () => {
  const { docs } = manifests(["-A"]);
  const pod = docs.find((d) => d.kind === "Deployment").spec.template.spec;
  expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } });
  expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
  expect(pod.containers).toHaveLength(1);
  expect(pod.containers[0].securityContext).toEqual({
    runAsNonRoot: true, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] },
  });
  // restricted also forbids host namespaces, host ports and volumes other than the safe kinds: none are used
  for (const key of ["hostNetwork", "hostPID", "hostIPC", "volumes", "initContainers"]) expect(pod[key]).toBeUndefined();
  expect(pod.containers[0].ports.every((p: { hostPort?: number }) => p.hostPort === undefined)).toBe(true);
}, 20_000);

test("the memory limit has headroom over the measured peak, and the YAML says where the figure comes from", () => {
  const result = Bun.spawnSync([process.execPath, join(repo, "src/cli.ts"), "manifests", "-A"], { cwd: repo, env: { PATH: process.env.PATH ?? "", HOME: "/nonexistent" } });
  const text = result.stdout.toString();
  const note = /# limits\.memory: (\d+)Mi is twice the (\d+) MiB peak RSS measured with 10,000 tiny objects/.exec(text);
  expect(note).not.toBeNull();
  const [limit, peak] = [Number(note![1]), Number(note![2])];
  expect(peak).toBeGreaterThan(0);
  expect(limit).toBeGreaterThanOrEqual(peak * 2);
  const deployment = parseAllDocuments(text).map((d) => d.toJS()).find((d) => d.kind === "Deployment");
  expect(deployment.spec.template.spec.containers[0].resources.limits).toEqual({ memory: `${limit}Mi` });
}, 20_000);

test("the Deployment runs with the namespaces and peering choices its RBAC was made for", () => {
  const args = (flags: string[]) => manifests(flags).docs.find((d) => d.kind === "Deployment").spec.template.spec.containers[0].args;
  expect(args(["-n", "team-a", "--standalone"])).toEqual(["run", "--namespace=team-a", "--standalone", "--liveness=http://0.0.0.0:8080/healthz"]);
  expect(args(["-n", "team-*", "-n", "!team-x", "--peering", "ops", "--priority", "5"]))
    .toEqual(["run", "--namespace=team-*", "--namespace=!team-x", "--peering=ops", "--priority=5", "--liveness=http://0.0.0.0:8080/healthz"]);
  expect(args(["-A", "-n", "!kube-*"])).toEqual(["run", "--all-namespaces", "--namespace=!kube-*", "--liveness=http://0.0.0.0:8080/healthz"]);
}, 20_000);

test("--env NAME=VALUE sets the operator's own environment in the Deployment; a bad, doubled or kobun's own name is exit 3", () => {
  const { code, docs, stderr } = manifests(["-n", "team-a", "--env", "MEMCACHED_IMAGE=memcached:1.6", "--env=LOG.LEVEL=a=b"]);
  expect(stderr).toBe("");
  expect(code).toBe(0);
  const container = docs.find((d) => d.kind === "Deployment").spec.template.spec.containers[0];
  expect(container.env.map((e: { name: string }) => e.name)).toEqual(["POD_ID", "POD_NAMESPACE", "MEMCACHED_IMAGE", "LOG.LEVEL"]);
  expect(container.env.slice(2)).toEqual([{ name: "MEMCACHED_IMAGE", value: "memcached:1.6" }, { name: "LOG.LEVEL", value: "a=b" }]);
  expect(container.args).toEqual(["run", "--namespace=team-a", "--liveness=http://0.0.0.0:8080/healthz"]); // not run flags
  const bad = manifests(["--env", "1X=y", "--env", "POD_ID=me", "--env", "A=1", "--env", "A=2", "--env", "novalue"]);
  expect(bad.code).toBe(3);
  expect(bad.docs).toEqual([]);
  expect(bad.stderr).toContain('got "1X=y"');
  expect(bad.stderr).toContain("POD_ID is set by kobun");
  expect(bad.stderr).toContain("A is given twice");
  expect(bad.stderr).toContain('got "novalue"');
}, 20_000);

test("settings only kobun.yaml can say reach the Deployment: a ConfigMap mounted as --config gives `kobun run` the same settings", () => {
  using config = withConfig([
    "peering: { mode: lease, name: my-lease }", "watching: { clusterWideAbove: 3, serverTimeout: 120 }", "logging: { format: json }",
    "kube: { kubeconfig: /nonexistent/kobun-test/kubeconfig, requestTimeout: 30 }", "",
  ].join("\n"));
  const flags = ["--config", config.path, "-n", "team-*", "-n", "!team-x"];
  const { code, docs } = manifests([...flags, "--name", "op", "--operator-namespace", "ops"]);
  expect(code).toBe(0);
  const configMap = docs.find((d) => d.kind === "ConfigMap");
  expect(configMap.metadata).toEqual({ name: "op", namespace: "ops" });
  const file = parse(configMap.data["kobun.yaml"]);
  // the laptop's kubeconfig stays behind: in the cluster the ServiceAccount's credentials are used
  expect(file).toEqual({ peering: { mode: "lease" }, watching: { serverTimeout: 120, clusterWideAbove: 3 }, logging: { format: "json" }, kube: { requestTimeout: 30 } });
  const pod = docs.find((d) => d.kind === "Deployment").spec.template.spec;
  expect(pod.volumes).toEqual([{ name: "config", configMap: { name: "op" } }]);
  expect(pod.containers[0].volumeMounts).toEqual([{ name: "config", mountPath: "/etc/kobun", readOnly: true }]);
  const args: string[] = pod.containers[0].args;
  expect(args.slice(0, 2)).toEqual(["run", "--config=/etc/kobun/kobun.yaml"]);

  // `kobun run` with the Deployment's arguments and that file: the settings manifests was made for
  const run = parseRunFlags(args.slice(2).filter((a) => !a.startsWith("--liveness")));
  const inCluster = resolveSettings({ fileData: file, flags: run.flags });
  const here = resolveSettings({ flags: parseRunFlags(flags).flags });
  const comparable = (s: any) => ({ ...s, kube: { ...s.kube, kubeconfig: null }, probes: null });
  expect(comparable(inCluster)).toEqual(comparable(here));
}, 20_000);

test("no ConfigMap and no volume when the flags say everything", () => {
  const { docs } = manifests(["-n", "team-a", "--standalone", "--priority", "3"]);
  expect(docs.filter((d) => d.kind === "ConfigMap")).toEqual([]);
  const pod = docs.find((d) => d.kind === "Deployment").spec.template.spec;
  expect(pod.volumes).toBeUndefined();
  expect(pod.containers[0].args.some((a: string) => a.startsWith("--config"))).toBe(false);
}, 20_000);

test("handlers with webhooks: a Service, the webhook configurations, the CRD's conversion, RBAC for exactly those objects; all apply", async () => {
  const { code, docs, stderr } = manifests(["test/e2e/handlers", "-n", "team-w", "--standalone", "--name", "widget-op", "--operator-namespace", "ops"]);
  expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
  const byKind = (kind: string) => docs.filter((d) => d.kind === kind);
  expect(byKind("Service")[0].spec).toEqual({ selector: { app: "widget-op" }, ports: [{ name: "webhooks", port: 443, targetPort: 9443, protocol: "TCP" }] });
  const [validating] = byKind("ValidatingWebhookConfiguration");
  expect(validating.metadata.name).toBe("widget-op");
  expect(validating.webhooks[0]).toMatchObject({
    name: "widget-size.widget-op.kobun.dev", admissionReviewVersions: ["v1"], failurePolicy: "Fail", sideEffects: "None", timeoutSeconds: 10,
    clientConfig: { service: { name: "widget-op", namespace: "ops", port: 443, path: "/validate/widget-size" } },
    rules: [{ operations: ["CREATE", "UPDATE"], apiGroups: ["e2e.kobun.dev"], apiVersions: ["*"], resources: ["kobunwidgets"], scope: "Namespaced" }],
  });
  expect(byKind("MutatingWebhookConfiguration")[0].webhooks[0].clientConfig.service.path).toBe("/mutate/widget-defaults");
  const crd = docs.find((d) => d.metadata.name === "kobunwidgets.e2e.kobun.dev");
  expect(crd.spec.conversion).toEqual({
    strategy: "Webhook",
    webhook: { conversionReviewVersions: ["v1"], clientConfig: { service: { name: "widget-op", namespace: "ops", port: 443, path: "/convert/kobunwidgets.e2e.kobun.dev" } } },
  });
  const clusterRole = byKind("ClusterRole")[0];
  expect(clusterRole.rules).toContainEqual({
    apiGroups: ["admissionregistration.k8s.io"], resources: ["validatingwebhookconfigurations", "mutatingwebhookconfigurations"], verbs: ["get", "update"], resourceNames: ["widget-op"],
  });
  expect(clusterRole.rules).toContainEqual({ apiGroups: ["apiextensions.k8s.io"], resources: ["customresourcedefinitions"], verbs: ["get", "patch"], resourceNames: ["kobunwidgets.e2e.kobun.dev"] });
  const container = byKind("Deployment")[0].spec.template.spec.containers[0];
  expect(container.args).toEqual(expect.arrayContaining(["--webhooks-listen=0.0.0.0:9443", "--webhooks-name=widget-op"]));
  expect(container.ports).toEqual([{ name: "metrics", containerPort: 8080, protocol: "TCP" }, { name: "webhooks", containerPort: 9443, protocol: "TCP" }]);
  for (const ns of ["ops", "team-w"]) await fetch(`${sandbox.url}/api/v1/namespaces`, { method: "POST", body: JSON.stringify({ metadata: { name: ns } }) });
  for (const doc of docs) {
    const response = await fetch(`${sandbox.url}${await collectionPath(doc)}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(doc) });
    expect({ kind: doc.kind, status: response.status }).toEqual({ kind: doc.kind, status: 201 });
  }
}, 20_000);

test("the Deployment exposes /metrics on a port named metrics with the prometheus.io annotations, and probes /healthz and /readyz", () => {
  const { docs } = manifests(["-n", "team-a"]);
  const template = docs.find((d) => d.kind === "Deployment").spec.template;
  expect(template.metadata.annotations).toEqual({ "prometheus.io/scrape": "true", "prometheus.io/port": "8080", "prometheus.io/path": "/metrics" });
  const container = template.spec.containers[0];
  expect(container.ports).toEqual([{ name: "metrics", containerPort: 8080, protocol: "TCP" }]);
  expect(container.livenessProbe).toEqual({ httpGet: { path: "/healthz", port: 8080 } });
  expect(container.readinessProbe).toEqual({ httpGet: { path: "/readyz", port: 8080 } });
  expect(container.args).toContain("--liveness=http://0.0.0.0:8080/healthz");
}, 20_000);
