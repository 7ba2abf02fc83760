// resolve(): selectors of every accepted form, turned into Resources via discovery, cached,
// refreshed on a miss (a CRD installed after the first lookup), ambiguity and unknowns.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { KubeClient, parseSelector, type Resource } from "../../src/kube/index.ts";
import { crdBody } from "../e2e/harness/crd-body.ts";

let sb: Sandbox;
let client: KubeClient;

const CRD: Resource = { group: "apiextensions.k8s.io", version: "v1", plural: "customresourcedefinitions", kind: "CustomResourceDefinition", namespaced: false, statusSubresource: true };

function crd(group: string, plural: string, kind: string, versions = ["v1"]) {
  return crdBody(group, plural, kind, versions, { status: true, shortNames: [`${plural.slice(0, 2)}${group[0]}`] });
}

beforeAll(async () => {
  sb = await startSandbox();
  client = await KubeClient.connect({ kubeconfig: sb.kubeconfigPath });
});
afterAll(async () => {
  client.close();
  await sb.stop();
});

test("every selector form resolves", async () => {
  const core = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false };
  expect(await client.resolve("configmaps")).toMatchObject(core);
  expect(await client.resolve("v1/configmaps")).toMatchObject(core);
  expect(await client.resolve("cm")).toMatchObject(core);
  expect(await client.resolve({ plural: "configmaps", group: "" })).toMatchObject(core);
  const lease = { group: "coordination.k8s.io", version: "v1", plural: "leases", kind: "Lease", namespaced: true };
  expect(await client.resolve("leases.coordination.k8s.io")).toMatchObject(lease);
  expect(await client.resolve("leases.coordination.k8s.io/v1")).toMatchObject(lease);
  expect(await client.resolve("coordination.k8s.io/v1/leases")).toMatchObject(lease);
  expect(await client.resolve({ group: "coordination.k8s.io", plural: "leases" })).toMatchObject(lease);
  expect(await client.resolve("namespaces")).toMatchObject({ namespaced: false, statusSubresource: true });
});

test("discovery is cached", async () => {
  await client.resolve("leases.coordination.k8s.io");
  sb.stats.reset();
  for (let i = 0; i < 5; i++) await client.resolve("leases.coordination.k8s.io");
  expect(sb.stats.log.length).toBe(0);
});

test("a CRD installed after the first lookup is found by refreshing on a miss", async () => {
  await client.resolve("configmaps"); // warm every cache
  await client.create(CRD, null, crd("a.example.com", "widgets", "Widget", ["v1beta1", "v1"]));
  // The group prefers v1 over v1beta1 (GA first, as kube-apiserver orders a CRD group's versions).
  expect(await client.resolve("widgets.a.example.com")).toMatchObject({ group: "a.example.com", version: "v1", plural: "widgets", kind: "Widget", statusSubresource: true });
  expect(await client.resolve("widgets.a.example.com/v1beta1")).toMatchObject({ version: "v1beta1" });
  expect(await client.resolve("widgets")).toMatchObject({ group: "a.example.com" });
  expect(await client.resolve("widget")).toMatchObject({ group: "a.example.com" });
});

test("an ambiguous plural lists the candidates; the core group wins ties as in kubectl", async () => {
  await client.create(CRD, null, crd("b.example.com", "widgets", "Widget"));
  // A name that was unique when cached stays resolved from the cache until the cache is dropped.
  expect(await client.resolve("widgets")).toMatchObject({ group: "a.example.com" });
  client.invalidateDiscovery();
  await expect(client.resolve("widgets")).rejects.toThrow(/"widgets" is ambiguous: it matches widgets\.a\.example\.com\/v1, widgets\.b\.example\.com\/v1/);
  expect(await client.resolve("events")).toMatchObject({ group: "" });
  expect(await client.resolve("events.events.k8s.io")).toMatchObject({ group: "events.k8s.io" });
});

test("a resource served only in a version its group does not prefer is found there, as kubectl finds it", async () => {
  const crds = await client.resolve("customresourcedefinitions");
  await client.create(crds, null, crd("multi.example", "widgets", "Widget", ["v1", "v2"]));
  const groups = (await (await fetch(`${sb.url}/apis`)).json()) as { groups: { name: string; preferredVersion: { version: string } }[] };
  const preferred = groups.groups.find((g) => g.name === "multi.example")!.preferredVersion.version;
  const other = preferred === "v1" ? "v2" : "v1";
  // Sprockets are served only in the version the group does not prefer.
  await client.create(crds, null, crd("multi.example", "sprockets", "Sprocket", [other]));
  expect(await client.resolve("sprockets.multi.example")).toMatchObject({ version: other, plural: "sprockets" });
  expect(await client.resolve("sprockets")).toMatchObject({ group: "multi.example", version: other });
  expect(await client.resolve("widgets.multi.example")).toMatchObject({ version: preferred });
});

test("unknown selectors are clear errors naming the selector", async () => {
  await expect(client.resolve("gadgets.example.com")).rejects.toThrow('unknown resource "gadgets.example.com"');
  await expect(client.resolve("gadgets")).rejects.toThrow('unknown resource "gadgets"');
  await expect(client.resolve("v2/configmaps")).rejects.toThrow('unknown resource "v2/configmaps"');
  await expect(client.resolve("a/b/c/d")).rejects.toThrow(/cannot read resource selector "a\/b\/c\/d"/);
});

test("parseSelector", () => {
  expect(parseSelector("kopfexamples.kopf.dev/v1")).toMatchObject({ name: "kopfexamples", group: "kopf.dev", version: "v1" });
  expect(parseSelector("apps/v1/deployments")).toMatchObject({ name: "deployments", group: "apps", version: "v1" });
  expect(parseSelector("v1/pods")).toMatchObject({ name: "pods", group: "", version: "v1" });
  expect(parseSelector("pods")).toMatchObject({ name: "pods" });
  expect(parseSelector("pods").group).toBeUndefined();
  expect(() => parseSelector("apps/deployments")).toThrow(/cannot read resource selector/);
});
