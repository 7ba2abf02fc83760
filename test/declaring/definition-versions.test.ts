// defineResource with a schema per version: the CRD carries each version's own schema, its
// served/storage/deprecated flags and a status subresource only where that version has a status;
// `kobun manifests` prints it and an API server (the sandbox) accepts it.

import { afterAll, expect, test } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import Type from "typebox";
import { defineResource } from "../../src/index.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { startSandbox } from "@kobun/sandbox";

const repo = join(import.meta.dir, "../..");
const work = join(repo, ".tmp", `definition-versions-${process.pid}`);
afterAll(() => rmSync(work, { recursive: true, force: true }));

const definition = `
import { defineResource, on } from ${JSON.stringify(join(repo, "src/index.ts"))};
import Type from "typebox";
export const Gadgets = defineResource({
  group: "example.com", kind: "Gadget", plural: "gadgets",
  versions: {
    v1: { storage: true, schema: { spec: Type.Object({ replicas: Type.Integer() }), status: Type.Object({ ready: Type.Optional(Type.Boolean()) }) } },
    v1beta1: { deprecated: "use example.com/v1", schema: { spec: Type.Object({ size: Type.Integer() }) } },
    v1alpha1: { served: false, schema: { spec: Type.Object({ size: Type.String() }) } },
  },
});
on.create(Gadgets, ({ spec }) => ({ replicas: spec.replicas }), { id: "replicas" });
on.create(Gadgets.versions.v1beta1, ({ spec }) => ({ size: spec.size }), { id: "size" });
`;

test("kobun manifests prints one CRD with a schema, flags and subresources per version, and an API server accepts it", async () => {
  mkdirSync(join(work, "handlers"), { recursive: true });
  writeFileSync(join(work, "handlers", "gadgets.ts"), definition);
  const result = Bun.spawnSync([process.execPath, join(repo, "src/cli.ts"), "manifests", join(work, "handlers"), "-n", "default"], {
    cwd: work, env: { PATH: process.env.PATH ?? "", HOME: "/nonexistent" },
  });
  expect(result.stderr.toString()).toBe("");
  const crds = parseAllDocuments(result.stdout.toString()).map((d) => d.toJS()).filter((d) => d?.metadata?.name === "gadgets.example.com");
  expect(crds).toHaveLength(1);
  const versions = crds[0].spec.versions.map((v: any) => ({
    name: v.name, served: v.served, storage: v.storage, deprecated: v.deprecationWarning ?? v.deprecated ?? false,
    spec: Object.keys(v.schema.openAPIV3Schema.properties.spec.properties), status: v.subresources?.status !== undefined,
  }));
  expect(versions).toEqual([
    { name: "v1", served: true, storage: true, deprecated: false, spec: ["replicas"], status: true },
    { name: "v1beta1", served: true, storage: false, deprecated: "use example.com/v1", spec: ["size"], status: true },
    { name: "v1alpha1", served: false, storage: false, deprecated: false, spec: ["size"], status: true },
  ]);
  // A version without a status schema has an open one: the handlers' results and kobun's progress land there.
  expect(crds[0].spec.versions[2].schema.openAPIV3Schema.properties.status)
    .toEqual({ type: "object", "x-kubernetes-preserve-unknown-fields": true });
  await using sandbox = { ...(await startSandbox()), async [Symbol.asyncDispose]() { await this.stop(); } };
  const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  const crdResource = { group: "apiextensions.k8s.io", version: "v1", plural: "customresourcedefinitions", kind: "CustomResourceDefinition", namespaced: false, statusSubresource: true };
  expect((await client.create(crdResource, null, crds[0])).metadata?.name).toBe("gadgets.example.com");
}, 30_000);

test("the token is the storage version's, and versions holds one token per version", () => {
  const Things = defineResource({
    group: "example.com", kind: "Thing", plural: "things",
    versions: { v2: { storage: true, schema: { spec: Type.Object({}) } }, v1: { schema: { spec: Type.Object({}) } } },
  });
  expect(JSON.stringify(Things)).toBe('"things.example.com/v2"');
  expect(JSON.stringify(Things.versions.v1)).toBe('"things.example.com/v1"');
  expect(Things.versions.v2).toBe(Things.versions.v2);
  expect(Things.crd.spec.versions.map((v: any) => v.name)).toEqual(["v2", "v1"]);
});

test("a schema per version is refused without exactly one served storage version, or beside a shared schema", () => {
  const spec = { spec: Type.Object({}) };
  const base = { group: "example.com", kind: "Thing", plural: "things" };
  expect(() => defineResource({ ...base, versions: { v1: { schema: spec }, v2: { schema: spec } } } as never)).toThrow(/exactly one version must have storage: true \(none has\)/);
  expect(() => defineResource({ ...base, versions: { v1: { storage: true, schema: spec }, v2: { storage: true, schema: spec } } } as never)).toThrow(/\(v1, v2 have\)/);
  expect(() => defineResource({ ...base, versions: { v1: { storage: true, served: false, schema: spec } } })).toThrow(/storage version v1 must be served/);
  expect(() => defineResource({ ...base, versions: { v1: { storage: true } } } as never)).toThrow(/versions\.v1\.schema\.spec is required/);
  expect(() => defineResource({ ...base, schema: spec, versions: { v1: { storage: true, schema: spec } } } as never)).toThrow(/either schema .* or a schema in each of versions/);
});
