// `kobun manifests`: its output applies cleanly to an API server, and its RBAC is derived
// from the handlers (least privilege: the handled resources, their status, events, peering).

import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.ts";

const repo = join(import.meta.dir, "../..");
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
