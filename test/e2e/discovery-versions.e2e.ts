// A CRD group serving several versions, on each target: discovery lists them in kube-apiserver's
// order (GA, beta, alpha; the higher number first), so a group serving v1beta1, v1 and v2 prefers
// v2, whatever version stores; and kobun's client finds a resource served only in a version the
// group does not prefer (as kubectl does). A difference the sandbox had (it preferred the first
// version written); the CRDs are deleted at the end.
//
//   cd test/e2e && KOBUN_E2E_TARGET=cluster bun test ./discovery-versions.e2e.ts

import { describe, expect, test } from "bun:test";
import { KubeClient } from "../../src/kube/client.ts";
import type { Resource } from "../../src/kube/types.ts";
import { crdBody } from "./harness/crd-body.ts";
import { eventually, uniqueName } from "./harness/kube.ts";
import { targetSuite } from "./harness/suite.ts";
import { selectedTargets, type TargetName } from "./harness/target.ts";

const CRDS: Resource = { group: "apiextensions.k8s.io", version: "v1", plural: "customresourcedefinitions", kind: "CustomResourceDefinition", namespaced: false, statusSubresource: true };

interface GroupDoc { preferredVersion: { version: string }; versions: { version: string }[] }

describe.each(selectedTargets())("a CRD group of several versions against %s", (targetName: TargetName) => {
  const need = targetSuite(targetName, { crds: [], cleanup: [] });

  test("the group prefers v2 over v1 and v1beta1 (v1 stores), and a resource served only in v1 is found there", async () => {
    const t = need();
    const group = `${uniqueName("versions")}.e2e.kobun.dev`;
    const made = [
      crdBody(group, "widgets", "Widget", ["v1beta1", "v1", "v2"], { storage: "v1" }),
      crdBody(group, "gadgets", "Gadget", ["v1"]),
    ];
    try {
      for (const body of made) await t.client.create(CRDS, null, body);
      const read = () => t.client.request<GroupDoc>("GET", `/apis/${group}`).catch(() => undefined);
      let doc: GroupDoc | undefined;
      // The API server serves a new CRD's group, and each CRD in it, a moment after the write (each on its own).
      const inV1 = () => t.client.request<{ resources: { name: string }[] }>("GET", `/apis/${group}/v1`)
        .then((list) => list.resources.map((r) => r.name), () => [] as string[]);
      await eventually("the group in discovery with its three versions, both CRDs in v1", async () => {
        doc = await read();
        const names = await inV1();
        return doc?.versions.length === 3 && names.includes("gadgets") && names.includes("widgets");
      }, { timeoutMs: 30_000 });
      expect(doc!.preferredVersion.version).toBe("v2");
      expect(doc!.versions.map((v) => v.version)).toEqual(["v2", "v1", "v1beta1"]);
      const client = await KubeClient.connect({ kubeconfig: t.kubeconfigPath });
      try {
        expect(await client.resolve(`gadgets.${group}`)).toMatchObject({ group, version: "v1", plural: "gadgets" });
        expect(await client.resolve(`widgets.${group}`)).toMatchObject({ group, version: "v2", plural: "widgets" });
      } finally {
        client.close();
      }
    } finally {
      for (const body of made) await t.client.delete(CRDS, null, body.metadata.name).catch(() => undefined);
    }
  }, 60_000);
});
