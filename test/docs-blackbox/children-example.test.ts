// docs/children.md's first example, run as written (into a registry of its own) against the
// sandbox: the child ConfigMap is server-side applied, owned by the handled object with its labels,
// the Ready condition and the Event land, and the delete handler takes the child along (a 404 being
// fine); the resource named by kubectl's short name, as handlers.md allows.

import { expect, test } from "bun:test";
import { ApiError, ApplyConflictError, conditions, Registry } from "kobun";
import { startOperator } from "kobun/testing";

const crd = new URL("../../handlers/kobunexample.crd.yaml", import.meta.url).pathname;

test("children.md: adopt + api.apply + conditions.set + event.info, then the delete handler removes the child", async () => {
  const registry = new Registry();
  const on = registry.on;
  on.create("kex", async ({ api, adopt, body, name, spec, patch, event }) => {
    const child = adopt({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: `${name}-content` },
                          data: { page: String(spec.content) } });
    try {
      await api.apply(child);
    } catch (error) {
      if (error instanceof ApplyConflictError) event.warn("Conflict", error.message);
      throw error;
    }
    const cm = await api.get("configmaps", `${name}-content`);
    conditions.set(patch, { type: "Ready", status: "True", reason: "ChildrenApplied", message: `${Object.keys(cm.data ?? {}).length} keys` }, { object: body });
    event.info("ChildrenApplied", `applied ${child.metadata.name}`);
  }, { id: "children", children: ["configmaps"] });
  on.delete("kex", async ({ api, name }) => {
    try {
      await api.delete("configmaps", `${name}-content`, { propagationPolicy: "Background" });
    } catch (error) {
      if (!(error instanceof ApiError && error.code === 404)) throw error;
    }
  }, { id: "cleanup", children: ["configmaps"] });

  await using kit = await startOperator({ registry, crds: [crd], logLevel: "silent", timeout: 15_000 });
  const site = await kit.apply("kobunexamples.kobun.dev/v1", { metadata: { name: "site", labels: { team: "a" } }, spec: { content: "<h1>hi</h1>" } });
  const ready = await kit.until("kobunexamples.kobun.dev/v1", "site", (o) => conditions.isTrue(o, "Ready"));
  expect(conditions.get(ready, "Ready")).toMatchObject({ reason: "ChildrenApplied", message: "1 keys", observedGeneration: 1 });
  const child = await kit.get("v1/configmaps", "site-content");
  expect(child?.data).toEqual({ page: "<h1>hi</h1>" });
  expect(child?.metadata.labels).toEqual({ team: "a" });
  expect(child?.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: "KobunExample", name: "site", uid: site.metadata.uid, controller: true })]);
  const events = await kit.events(site, { until: (l) => l.some((e) => e.reason === "ChildrenApplied") });
  expect(events.find((e) => e.reason === "ChildrenApplied")?.message).toBe("applied site-content");
  await kit.delete("kobunexamples.kobun.dev/v1", "site");
  await kit.gone("kobunexamples.kobun.dev/v1", "site");
  await kit.gone("v1/configmaps", "site-content");
}, 30_000);
