// Schema first: one TypeBox definition gives the CRD (structural schema, printer columns,
// status subresource) that `kobun manifests` prints and the sandbox validates objects against.

import { afterAll, describe, expect, test } from "bun:test";
import Type from "typebox";
import { parse } from "yaml";
import { defineResource } from "../../src/declaring/definition.ts";
import { Registry } from "../../src/declaring/registry.ts";
import { KubeClient } from "../../src/kube/client.ts";
import type { Resource } from "../../src/kube/types.ts";
import { withDefinitions } from "../../src/runtime/manifests.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";

const Backups = defineResource({
  group: "kobun.dev",
  kind: "KobunBackup",
  plural: "kobunbackups",
  shortNames: ["kb"],
  versions: ["v1", "v1beta1"],
  schema: {
    spec: Type.Object({
      size: Type.Integer({ minimum: 1 }),
      mode: Type.Union([Type.Literal("full"), Type.Literal("delta")]),
      note: Type.Optional(Type.String()),
      extra: Type.Optional(Type.Object({}, { "x-kubernetes-preserve-unknown-fields": true })),
    }),
    status: Type.Object({ phase: Type.Optional(Type.String()) }),
  },
  printerColumns: [{ name: "Size", type: "integer", jsonPath: ".spec.size" }],
});

let sandbox: Sandbox | undefined;
afterAll(async () => void (await sandbox?.stop()));

describe("defineResource", () => {
  test("emits the CRD: names, versions (first stored), structural schema, enum for a literal union, status subresource, printer columns", () => {
    const crd = Backups.crd;
    expect(crd.metadata.name).toBe("kobunbackups.kobun.dev");
    expect(crd.spec.names).toEqual({ kind: "KobunBackup", plural: "kobunbackups", singular: "kobunbackup", listKind: "KobunBackupList", shortNames: ["kb"] });
    expect(crd.spec.scope).toBe("Namespaced");
    expect(crd.spec.versions.map((v: any) => [v.name, v.served, v.storage])).toEqual([["v1", true, true], ["v1beta1", true, false]]);
    const [v1] = crd.spec.versions;
    expect(v1.subresources).toEqual({ status: {} });
    expect(v1.additionalPrinterColumns).toEqual([{ name: "Size", type: "integer", jsonPath: ".spec.size" }]);
    const spec = v1.schema.openAPIV3Schema.properties.spec;
    expect(spec.required.sort()).toEqual(["mode", "size"]);
    expect(spec.properties.mode).toEqual({ type: "string", enum: ["full", "delta"] });
    expect(spec.properties.size).toEqual({ type: "integer", minimum: 1 });
    expect(spec.properties.extra["x-kubernetes-preserve-unknown-fields"]).toBe(true);
    expect(JSON.stringify(crd)).not.toMatch(/anyOf|const|~/);
    expect({ ...Backups } as object).toEqual({ group: "kobun.dev", version: "v1", plural: "kobunbackups" });
  });

  test("bad definitions are refused with the field named", () => {
    const spec = Type.Object({});
    expect(() => defineResource({ group: "nodots", kind: "A", plural: "as", schema: { spec } })).toThrow(/group must be a DNS subdomain/);
    expect(() => defineResource({ group: "a.dev", kind: "lower", plural: "as", schema: { spec } })).toThrow(/kind must be CamelCase/);
    expect(() => defineResource({ group: "a.dev", kind: "A", plural: "As", schema: { spec } })).toThrow(/plural must be lowercase/);
    expect(() => defineResource({ group: "a.dev", kind: "A", plural: "as", versions: ["1"], schema: { spec } })).toThrow(/versions must be like/);
  });

  test("handlers registered for a defined resource bring its CRD into the manifests, once", () => {
    const registry = new Registry();
    registry.on.create(Backups, ({ spec, patch }) => void (patch.status.phase = spec.mode));
    registry.on.event(Backups, () => undefined);
    const manifests = withDefinitions([{ name: "other.yaml", text: "kind: ConfigMap\n" }], registry);
    expect(manifests.map((m) => m.name)).toEqual(["other.yaml", "kobunbackups.kobun.dev.crd.yaml"]);
    expect(parse(manifests[1]!.text)).toEqual(Backups.crd);
    // A CRD shipped as YAML beside the handlers wins: not printed twice.
    expect(withDefinitions(manifests, registry)).toHaveLength(2);
  });

  test("a defined resource only indexed, or only owned by a reconcile, brings its CRD too", () => {
    const indexed = new Registry();
    indexed.on.index(Backups, ({ name }) => ({ [name]: true }), { id: "backups" });
    expect(indexed.definitions()).toEqual([Backups.crd]);
    const owned = new Registry();
    owned.on.reconcile("configmaps", () => undefined, { owns: [Backups] });
    expect(owned.definitions()).toEqual([Backups.crd]);
  });

  test("the sandbox validates objects' types against the defined schema and keeps preserved-unknown fields", async () => {
    sandbox = await startSandbox();
    const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
    const crds: Resource = { group: "apiextensions.k8s.io", version: "v1", plural: "customresourcedefinitions", kind: "CustomResourceDefinition", namespaced: false, statusSubresource: true };
    await client.create(crds, null, Backups.crd);
    client.invalidateDiscovery();
    const resource = await client.resolve(Backups);
    const body = (spec: Record<string, unknown>) => ({ apiVersion: "kobun.dev/v1", kind: "KobunBackup", metadata: { name: "b" }, spec });
    await expect(client.create(resource, "default", body({ size: "big", mode: "full" }))).rejects.toMatchObject({ code: 422 });
    // (The sandbox checks types, not enums or bounds: see packages/sandbox/src/schema.ts.)
    const created = await client.create(resource, "default", body({ size: 2, mode: "delta", extra: { any: { thing: 1 } } }));
    expect(created.spec).toEqual({ size: 2, mode: "delta", extra: { any: { thing: 1 } } });
  });
});
