// Children and conditions end to end (issue 13): the example operator (dist/kobun, with
// handlers/children.ts) applies a ConfigMap and a Deployment for a KobunExample labelled
// kobun.dev/example=site, owned by it and reported as a Ready condition. Another field
// manager's conflicting apply is an error naming the field; taken over by force, the
// operator's next apply turns Ready False with that field. Deleting the parent removes the
// children: on the real control plane kube-controller-manager's garbage collector does it
// (test/cluster starts one), on the sandbox its own collector. A deleted namespace goes away
// on both too (the namespace controller). A cluster-scoped dependent of a namespaced owner is
// left on both (the collector's OwnerRefInvalidNamespace).
//
//   cd test/e2e && KOBUN_E2E_TARGET=cluster bun test ./children.e2e.ts
//
// Needs dist/kobun (`bun run build.ts`).

import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { ApplyConflictError } from "../../src/kube/errors.ts";
import type { KubeObject, Resource } from "../../src/kube/types.ts";
import { createNamespace, eventually, EVENTS, EXAMPLES, getOrUndefined, NAMESPACES, uniqueName } from "./harness/kube.ts";
import { ROOT, startOperator, type Operator } from "./harness/operator.ts";
import { targetSuite } from "./harness/suite.ts";
import { selectedTargets, type Target, type TargetName } from "./harness/target.ts";

const CONFIGMAPS: Resource = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false };
const DEPLOYMENTS: Resource = { group: "apps", version: "v1", plural: "deployments", kind: "Deployment", namespaced: true, statusSubresource: true };
/** The operator's field manager (runtime/handler-api.ts: "kobun" for the default peering). */
const MANAGER = "kobun";
/** The garbage collector of a fresh control plane first syncs its informers: give it time on a busy machine. */
const GC_MS = 60_000;

function site(name: string, content: string): KubeObject {
  return { apiVersion: "kobun.dev/v1", kind: "KobunExample", metadata: { name, labels: { "kobun.dev/example": "site" } }, spec: { content } };
}

const ready = (o: KubeObject | undefined) => (o?.status?.conditions as any[] | undefined)?.find((c) => c.type === "Ready");

describe.each(selectedTargets())("children and conditions against %s", (targetName: TargetName) => {
  const need = targetSuite(targetName, { crds: [join(ROOT, "handlers/kobunexample.crd.yaml")], cleanup: [EXAMPLES] });
  let op: Operator | undefined;
  let ns = "";
  const operator = async (t: Target) => {
    ns ||= await createNamespace(t.client, "e2e-children");
    op ??= startOperator(`children-${targetName}`, t.kubeconfigPath, ["--standalone", "-n", ns]);
    return op;
  };
  const waitReady = (t: Target, name: string, status: "True" | "False", o: Operator) =>
    eventually(`${name} Ready=${status}`, async () => {
      const obj = await t.client.get(EXAMPLES, ns, name);
      return ready(obj)?.status === status ? obj : undefined;
    }, { timeoutMs: 30_000 }).catch((e) => { throw new Error(`${e.message}\n${o.tail()}`); });

  test("a site gets a ConfigMap and a Deployment, owned by it and applied by the operator's field manager, and Ready=True", async () => {
    const t = need();
    const o = await operator(t);
    const name = uniqueName("site");
    await t.client.create(EXAMPLES, ns, site(name, "<h1>one</h1>"));
    const parent = await waitReady(t, name, "True", o);
    expect(ready(parent)).toMatchObject({ reason: "ChildrenApplied", observedGeneration: parent.metadata.generation });
    const page = await t.client.get(CONFIGMAPS, ns, `${name}-content`);
    const server = await t.client.get(DEPLOYMENTS, ns, `${name}-server`);
    for (const child of [page, server]) {
      expect(child.metadata.ownerReferences).toEqual([
        { apiVersion: "kobun.dev/v1", kind: "KobunExample", name, uid: parent.metadata.uid, controller: true, blockOwnerDeletion: true },
      ]);
      expect(child.metadata.labels).toEqual({ "kobun.dev/example": "site" });
      expect((child.metadata.managedFields as any[]).some((m) => m.manager === MANAGER && m.operation === "Apply")).toBe(true);
    }
    expect(page.data).toEqual({ "index.html": "<h1>one</h1>" });
    const events = await eventually("the ChildrenApplied Event", async () => {
      const list = await t.client.list(EVENTS, { namespace: ns });
      return list.items.find((e: any) => e.involvedObject?.name === name && e.reason === "ChildrenApplied");
    });
    expect(events.type).toBe("Normal");
  }, 90_000);

  test("another manager's conflicting apply names the field; taken by force, the operator's next apply turns Ready False", async () => {
    const t = need();
    const o = await operator(t);
    const name = uniqueName("site");
    await t.client.create(EXAMPLES, ns, site(name, "<h1>mine</h1>"));
    const first = await waitReady(t, name, "True", o);
    const theirs = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `${name}-content` }, data: { "index.html": "<h1>theirs</h1>" } };
    const refused = await t.client.apply(CONFIGMAPS, ns, `${name}-content`, theirs, { fieldManager: "e2e-editor" }).then(() => undefined, (e) => e);
    expect(refused).toBeInstanceOf(ApplyConflictError);
    expect((refused as ApplyConflictError).code).toBe(409);
    expect((refused as ApplyConflictError).conflicts).toEqual([expect.objectContaining({ field: ".data.index.html", manager: MANAGER })]);
    expect((refused as Error).message).toContain(`.data.index.html (owned by ${MANAGER})`);

    await t.client.apply(CONFIGMAPS, ns, `${name}-content`, theirs, { fieldManager: "e2e-editor", force: true });
    await t.client.patch(EXAMPLES, ns, name, { spec: { content: "<h1>mine again</h1>" } });
    const conflicted = await waitReady(t, name, "False", o);
    expect(ready(conflicted)).toMatchObject({ reason: "Conflict" });
    expect(ready(conflicted).message).toContain(".data.index.html");
    expect(ready(conflicted).lastTransitionTime >= ready(first).lastTransitionTime).toBe(true);
    expect((await t.client.get(CONFIGMAPS, ns, `${name}-content`)).data).toEqual({ "index.html": "<h1>theirs</h1>" });
  }, 90_000);

  test("deleting the parent deletes its children (the garbage collector, by their owner references)", async () => {
    const t = need();
    const o = await operator(t);
    const name = uniqueName("site");
    await t.client.create(EXAMPLES, ns, site(name, "<h1>short-lived</h1>"));
    await waitReady(t, name, "True", o);
    await t.client.delete(EXAMPLES, ns, name);
    await eventually(`${name} gone (its finalizer released)`, async () => (await getOrUndefined(t.client, EXAMPLES, ns, name)) === undefined, { timeoutMs: 30_000 });
    await eventually(`${name}'s children collected`, async () =>
      (await getOrUndefined(t.client, CONFIGMAPS, ns, `${name}-content`)) === undefined &&
      (await getOrUndefined(t.client, DEPLOYMENTS, ns, `${name}-server`)) === undefined,
    { timeoutMs: GC_MS, intervalMs: 200 });
  }, GC_MS + 60_000);

  test("a cluster-scoped dependent of a namespaced owner is left when the owner goes; a namespaced one is collected", async () => {
    const t = need();
    const name = uniqueName("owner");
    const owner = await t.client.create(CONFIGMAPS, ns || (ns = await createNamespace(t.client, "e2e-children")), {
      apiVersion: "v1", kind: "ConfigMap", metadata: { name },
    });
    const ref = { apiVersion: "v1", kind: "ConfigMap", name, uid: owner.metadata.uid!, controller: true };
    const tenant = `${name}-tenant`;
    await t.client.create(NAMESPACES, null, { apiVersion: "v1", kind: "Namespace", metadata: { name: tenant, ownerReferences: [ref] } });
    await t.client.create(CONFIGMAPS, ns, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `${name}-child`, ownerReferences: [ref] } });
    await t.client.delete(CONFIGMAPS, ns, name);
    try {
      // The collector has dealt with the owner's dependents once the valid one is gone; the invalid one stays.
      await eventually(`${name}-child collected`, async () => (await getOrUndefined(t.client, CONFIGMAPS, ns, `${name}-child`)) === undefined,
        { timeoutMs: GC_MS, intervalMs: 200 });
      const left = await getOrUndefined(t.client, NAMESPACES, null, tenant);
      expect(left?.metadata.deletionTimestamp).toBeUndefined();
      expect(left?.metadata.name).toBe(tenant);
    } finally {
      await t.client.delete(NAMESPACES, null, tenant).catch(() => {});
    }
  }, GC_MS + 30_000);

  test("a deleted namespace is emptied and removed, not left Terminating", async () => {
    const t = need();
    const doomed = await createNamespace(t.client, "e2e-doomed");
    await t.client.create(CONFIGMAPS, doomed, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "inside" } });
    await t.client.delete(NAMESPACES, null, doomed);
    await eventually(`namespace ${doomed} removed`, async () => (await getOrUndefined(t.client, NAMESPACES, null, doomed)) === undefined, { timeoutMs: GC_MS, intervalMs: 200 });
  }, GC_MS + 30_000);
});
