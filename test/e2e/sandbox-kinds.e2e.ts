// The kinds operators most often own besides workloads, served by the sandbox as by kube-apiserver and held to the
// real one on both targets with the real kubectl: PersistentVolumeClaims, Ingresses, PodDisruptionBudgets and
// NetworkPolicies: discovery (short names, verbs, status, the groups' place), the defaults and the first status a
// create gets (and who owns them), their tables, refused bodies. test/cluster runs no pvc-protection, PV binder
// or disruption controller, so what those write later is not compared; the sandbox plays pvc-protection's part
// (a deleted claim no Pod mounts goes), the cluster keeps it Terminating.
//
//   cd test/e2e && KOBUN_E2E_TARGET=sandbox bun test ./sandbox-kinds.e2e.ts

import { describe, expect, test } from "bun:test";
import { createNamespace, eventually } from "./harness/kube.ts";
import { kubectlTarget } from "./harness/kubectl.ts";
import { selectedTargets, type TargetName } from "./harness/target.ts";

const VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];
const STATUS = ["get", "patch", "update"];

const owned = (object: any, manager: string) => JSON.stringify((object.metadata.managedFields as any[]).find((m) => m.manager === manager)?.fieldsV1);

describe.each(selectedTargets())("the kinds operators own, on %s", (targetName: TargetName) => {
  const need = kubectlTarget(targetName, []);
  const getJson = async (ns: string, what: string) => JSON.parse(await need().k.ok(["get", what, "-n", ns, "-o", "json", "--show-managed-fields"]));
  const rows = async (ns: string, what: string) => (await need().k.ok(["get", what, "-n", ns, "-o", "wide", "--no-headers"]))
    .trim().split("\n").map((l) => l.split(/\s{2,}/));

  test("discovery: their resources, short names, verbs and status, and their groups' place", async () => {
    const { k } = need();
    const resources = async (path: string, names: string[]) => (JSON.parse(await k.ok(["get", "--raw", path])).resources as any[])
      .filter((r) => names.includes(r.name.split("/")[0])).map(({ storageVersionHash: _h, ...r }) => r);
    const pvc = { name: "persistentvolumeclaims", singularName: "persistentvolumeclaim", namespaced: true, kind: "PersistentVolumeClaim" };
    expect(await resources("/api/v1", ["persistentvolumeclaims"])).toEqual([
      { ...pvc, verbs: VERBS, shortNames: ["pvc"] }, { ...pvc, name: "persistentvolumeclaims/status", singularName: "", verbs: STATUS },
    ]);
    const ing = { name: "ingresses", singularName: "ingress", namespaced: true, kind: "Ingress" };
    expect(await resources("/apis/networking.k8s.io/v1", ["ingresses", "networkpolicies"])).toEqual([
      { ...ing, verbs: VERBS, shortNames: ["ing"] }, { ...ing, name: "ingresses/status", singularName: "", verbs: STATUS },
      { name: "networkpolicies", singularName: "networkpolicy", namespaced: true, kind: "NetworkPolicy", verbs: VERBS, shortNames: ["netpol"] },
    ]);
    const pdb = { name: "poddisruptionbudgets", singularName: "poddisruptionbudget", namespaced: true, kind: "PodDisruptionBudget" };
    expect(await resources("/apis/policy/v1", ["poddisruptionbudgets"])).toEqual([
      { ...pdb, verbs: VERBS, shortNames: ["pdb"] }, { ...pdb, name: "poddisruptionbudgets/status", singularName: "", verbs: STATUS },
    ]);
    const groups = JSON.parse(await k.ok(["get", "--raw", "/apis"])).groups.map((g: any) => g.name);
    const order = ["batch", "networking.k8s.io", "policy", "rbac.authorization.k8s.io"];
    expect(groups.filter((g: string) => order.includes(g))).toEqual(order);
  }, 60_000);

  test("a PersistentVolumeClaim: volumeMode, canonical quantities, Pending, pvc-protection; its table; its deletion", async () => {
    const { t, k } = need();
    const ns = await createNamespace(t.client, "e2e-kinds");
    await k.ok(["create", "-f", k.file(`pvc-${ns}.yaml`, `apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: ${ns}}
spec:
  accessModes: [ReadWriteOnce, ReadWriteMany]
  resources: {requests: {storage: 1024Mi}}
`)]);
    const pvc = await getJson(ns, "pvc/data");
    expect(pvc.spec).toEqual({ accessModes: ["ReadWriteOnce", "ReadWriteMany"], resources: { requests: { storage: "1Gi" } }, volumeMode: "Filesystem" });
    expect([pvc.status, pvc.metadata.finalizers, pvc.metadata.generation]).toEqual([{ phase: "Pending" }, ["kubernetes.io/pvc-protection"], undefined]);
    expect(owned(pvc, "kubectl-create")).toBe(JSON.stringify({ "f:spec": { "f:accessModes": {}, "f:resources": { "f:requests": { ".": {}, "f:storage": {} } }, "f:volumeMode": {} } }));
    expect(await rows(ns, "pvc")).toEqual([["data", "Pending", "<unset>", expect.stringMatching(/^\d+s$/), "Filesystem"]]);
    await k.ok(["delete", "pvc", "data", "-n", ns, "--wait=false"]);
    if (targetName === "sandbox") {
      await eventually("the claim gone", async () => ((await k.run(["get", "pvc", "data", "-n", ns])).code === 1 ? true : undefined));
      return;
    }
    // no pvc-protection controller runs in test/cluster: the claim waits for it
    const marked = await getJson(ns, "pvc/data");
    expect([Boolean(marked.metadata.deletionTimestamp), marked.metadata.finalizers]).toEqual([true, ["kubernetes.io/pvc-protection"]]);
    expect((await rows(ns, "pvc"))[0]?.[1]).toBe("Terminating");
    await k.ok(["patch", "pvc", "data", "-n", ns, "--type=merge", "-p", '{"metadata":{"finalizers":null}}']);
  }, 60_000);

  test("a claim a Pod mounts stays Terminating until the Pod goes (sandbox: as pvc-protection)", async () => {
    if (targetName !== "sandbox") return; // test/cluster runs no pvc-protection controller
    const { t, k } = need();
    const ns = await createNamespace(t.client, "e2e-kinds");
    await k.ok(["create", "-f", k.file(`used-${ns}.yaml`, `apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: used, namespace: ${ns}}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ${ns}}
spec:
  containers: [{name: c, image: "busybox:1"}]
  volumes: [{name: v, persistentVolumeClaim: {claimName: used}}]
`)]);
    await k.ok(["delete", "pvc", "used", "-n", ns, "--wait=false"]);
    await Bun.sleep(100);
    expect((await rows(ns, "pvc"))[0]?.[1]).toBe("Terminating");
    await k.ok(["delete", "pod", "p", "-n", ns, "--grace-period=0", "--force"]);
    await eventually("the claim gone", async () => ((await k.run(["get", "pvc", "used", "-n", ns])).code === 1 ? true : undefined));
  }, 60_000);

  test("an Ingress: its rules as kubectl create writes them, generation 1, an empty load balancer; its table", async () => {
    const { t, k } = need();
    const ns = await createNamespace(t.client, "e2e-kinds");
    await k.ok(["create", "ingress", "web", "-n", ns, "--rule=foo.com/bar*=svc:8080,tls=my-cert", "--class=nginx"]);
    await k.ok(["create", "ingress", "raw", "-n", ns, "--default-backend=s:80"]);
    const web = await getJson(ns, "ingress/web");
    expect(web.spec).toEqual({
      ingressClassName: "nginx", tls: [{ hosts: ["foo.com"], secretName: "my-cert" }],
      rules: [{ host: "foo.com", http: { paths: [{ backend: { service: { name: "svc", port: { number: 8080 } } }, path: "/bar", pathType: "Prefix" }] } }],
    });
    expect([web.metadata.generation, web.status]).toEqual([1, { loadBalancer: {} }]);
    expect(owned(web, "kubectl-create")).toBe(JSON.stringify({ "f:spec": { "f:ingressClassName": {}, "f:rules": {}, "f:tls": {} } }));
    expect(await rows(ns, "ingress")).toEqual([
      ["raw", "<none>", "*", "80", expect.stringMatching(/^\d+s$/)],
      ["web", "nginx", "foo.com", "80, 443", expect.stringMatching(/^\d+s$/)],
    ]);
  }, 60_000);

  test("a PodDisruptionBudget: generation 1 and the zero status the disruption controller starts from; its table", async () => {
    const { t, k } = need();
    const ns = await createNamespace(t.client, "e2e-kinds");
    await k.ok(["create", "pdb", "min", "-n", ns, "--selector=app=w", "--min-available=1"]);
    await k.ok(["create", "pdb", "max", "-n", ns, "--selector=app=w", "--max-unavailable=25%"]);
    const min = await getJson(ns, "pdb/min");
    expect([min.spec, min.metadata.generation]).toEqual([{ minAvailable: 1, selector: { matchLabels: { app: "w" } } }, 1]);
    expect(min.status).toEqual({ currentHealthy: 0, desiredHealthy: 0, disruptionsAllowed: 0, expectedPods: 0 });
    expect(owned(min, "kubectl-create")).toBe(JSON.stringify({ "f:spec": { "f:minAvailable": {}, "f:selector": {} } }));
    expect((await rows(ns, "pdb")).map((r) => r.slice(0, 4))).toEqual([["max", "N/A", "25%", "0"], ["min", "1", "N/A", "0"]]);
  }, 60_000);

  test("a NetworkPolicy: its policyTypes and ports' protocol defaulted, generation 1, no status; its table", async () => {
    const { t, k } = need();
    const ns = await createNamespace(t.client, "e2e-kinds");
    await k.ok(["create", "-f", k.file(`np-${ns}.yaml`, `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: deny, namespace: ${ns}}
spec: {podSelector: {}}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: both, namespace: ${ns}}
spec:
  podSelector: {matchLabels: {app: w}}
  ingress: [{from: [{podSelector: {}}], ports: [{port: 80}]}]
  egress: [{to: [{ipBlock: {cidr: 10.0.0.0/8}}], ports: [{port: 53, protocol: UDP}]}]
`)]);
    const deny = await getJson(ns, "netpol/deny");
    expect([deny.spec, deny.metadata.generation, deny.status]).toEqual([{ podSelector: {}, policyTypes: ["Ingress"] }, 1, undefined]);
    expect(owned(deny, "kubectl-create")).toBe(JSON.stringify({ "f:spec": { "f:policyTypes": {} } }));
    const both = await getJson(ns, "netpol/both");
    expect(both.spec.policyTypes).toEqual(["Ingress", "Egress"]);
    expect([both.spec.ingress[0].ports, both.spec.egress[0].ports]).toEqual([[{ port: 80, protocol: "TCP" }], [{ port: 53, protocol: "UDP" }]]);
    expect((await rows(ns, "netpol")).map((r) => r.slice(0, 2))).toEqual([["both", "app=w"], ["deny", "<none>"]]);
  }, 60_000);

  test("refused bodies in the server's words: an unknown field (strict), a value of the wrong type", async () => {
    const { t, k } = need();
    const ns = await createNamespace(t.client, "e2e-kinds");
    const ingress = k.file(`bad-ing-${ns}.yaml`, `apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: bad, namespace: ${ns}}\nspec:\n  rules: [{host: a.com, bogus: 1}]\n`);
    const strict = await k.run(["create", "-f", ingress, "--validate=strict", "--dry-run=server"]);
    expect(strict.stderr.trim()).toBe(`Error from server (BadRequest): error when creating "${ingress}": Ingress in version "v1" cannot be handled as a Ingress: strict decoding error: unknown field "spec.rules[0].bogus"`);
    const claim = k.file(`bad-pvc-${ns}.yaml`, `apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: bad, namespace: ${ns}}\nspec: {volumeName: 5}\n`);
    const typed = await k.run(["create", "-f", claim, "--validate=false"]);
    expect(typed.stderr.trim()).toBe(`Error from server (BadRequest): error when creating "${claim}": PersistentVolumeClaim in version "v1" cannot be handled as a PersistentVolumeClaim: json: cannot unmarshal number into Go struct field PersistentVolumeClaimSpec.spec.volumeName of type string`);
  }, 60_000);
});
