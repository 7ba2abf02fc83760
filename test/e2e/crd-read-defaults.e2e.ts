// A CRD's schema `default`s apply to what the server reads back, not only to writes: an object
// stored before its CRD gained a default shows it on GET, LIST and in watch events, with its
// resourceVersion unchanged (nothing was written), on the sandbox as on a real kube-apiserver.
//
//   cd test/e2e && KOBUN_E2E_TARGET=cluster bun test ./crd-read-defaults.e2e.ts

import { describe, expect, test } from "bun:test";
import type { KubeObject, Resource } from "../../src/kube/types.ts";
import { eventually, rawWatch, uniqueName } from "./harness/kube.ts";
import { targetSuite } from "./harness/suite.ts";
import { selectedTargets, type TargetName } from "./harness/target.ts";

const CRDS: Resource = { group: "apiextensions.k8s.io", version: "v1", plural: "customresourcedefinitions", kind: "CustomResourceDefinition", namespaced: false, statusSubresource: true };

function crd(group: string, withDefault: boolean): KubeObject {
  const size = withDefault ? { type: "string", default: "medium" } : { type: "string" };
  return {
    apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata: { name: `gadgets.${group}` },
    spec: {
      group, scope: "Namespaced", names: { plural: "gadgets", singular: "gadget", kind: "Gadget", listKind: "GadgetList" },
      versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: { type: "object", properties: { spec: { type: "object", properties: { colour: { type: "string" }, size } } } } } }],
    },
  };
}

describe.each(selectedTargets())("CRD defaults on read on %s", (targetName: TargetName) => {
  const need = targetSuite(targetName, { crds: [], cleanup: [] });

  test("an object stored before its CRD gained a default shows the default on GET, LIST and watch, unwritten", async () => {
    const { client } = need();
    const group = `${uniqueName("g")}.e2e.kobun.dev`;
    const gadgets: Resource = { group, version: "v1", plural: "gadgets", kind: "Gadget", namespaced: true, statusSubresource: false };
    await client.create(CRDS, null, crd(group, false));
    try {
      const created = await eventually("the CRD served", async () =>
        client.create(gadgets, "default", { apiVersion: `${group}/v1`, kind: "Gadget", metadata: { name: "one" }, spec: { colour: "red" } }).catch(() => undefined), { timeoutMs: 30_000 });
      expect(created.spec).toEqual({ colour: "red" });
      const current = await client.get(CRDS, null, `gadgets.${group}`);
      await client.replace(CRDS, null, `gadgets.${group}`, { ...crd(group, true), metadata: current.metadata });

      const read = await eventually("the new default on GET", async () => {
        const got = await client.get(gadgets, "default", "one");
        return got.spec?.size === "medium" ? got : undefined;
      }, { timeoutMs: 30_000 });
      expect(read.spec).toEqual({ colour: "red", size: "medium" });
      expect(read.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
      const listed = await client.list(gadgets, { namespace: "default" });
      expect(listed.items.map((o) => o.spec)).toEqual([{ colour: "red", size: "medium" }]);
      const watched = await rawWatch(client, `/apis/${group}/v1/namespaces/default/gadgets`, { resourceVersion: "0" }, { until: (ev) => ev.type === "ADDED", timeoutMs: 10_000 });
      expect(watched.events.find((ev) => ev.type === "ADDED")?.object?.spec).toEqual({ colour: "red", size: "medium" });
    } finally {
      await client.delete(CRDS, null, `gadgets.${group}`);
    }
  }, 60_000);
});
