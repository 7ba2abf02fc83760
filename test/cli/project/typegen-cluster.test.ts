// `kobun generate types --from-cluster --kubeconfig FILE`: the CRDs the API server serves (the
// sandbox here), read with that kubeconfig only, give the same interfaces as their files.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateCommand, typesFromCRDs } from "../../../src/cli/project/typegen.ts";
import { KubeClient } from "../../../src/kube/client.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";

const crdResource = { group: "apiextensions.k8s.io", version: "v1", plural: "customresourcedefinitions", kind: "CustomResourceDefinition", namespaced: false, statusSubresource: true };
const gadgets = {
  apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata: { name: "gadgets.example.com" },
  spec: {
    group: "example.com", scope: "Namespaced", names: { kind: "Gadget", plural: "gadgets", singular: "gadget", listKind: "GadgetList" },
    versions: ["v1alpha1", "v1"].map((name) => ({
      name, served: true, storage: name === "v1",
      schema: { openAPIV3Schema: { type: "object", properties: {
        spec: { type: "object", required: ["size"], properties: {
          size: { "x-kubernetes-int-or-string": true },
          mode: { type: "string", enum: ["on", "off"] },
          ...(name === "v1" ? { owner: { type: "string", nullable: true } } : {}),
        } },
      } } },
    })),
  },
};
const other = { ...gadgets, metadata: { name: "others.other.io" }, spec: { ...gadgets.spec, group: "other.io", names: { kind: "Other", plural: "others", singular: "other", listKind: "OtherList" } } };

let sandbox: Sandbox;
const work = mkdtempSync(join(tmpdir(), "kobun-typegen-cluster-"));

beforeAll(async () => {
  sandbox = await startSandbox();
  const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  for (const crd of [gadgets, other]) await client.create(crdResource, null, crd);
});
afterAll(async () => {
  await sandbox?.stop();
  rmSync(work, { recursive: true, force: true });
});

test("--from-cluster writes an interface per served version of the group's CRDs, as from their files", async () => {
  const out = join(work, "gadgets.ts");
  expect(await generateCommand(["types", "--from-cluster", "--kubeconfig", sandbox.kubeconfigPath, "--group", "example.com", "--out", out])).toBe(0);
  const text = readFileSync(out, "utf8");
  expect(text).toBe(typesFromCRDs([gadgets]));
  expect(text).toContain("export interface GadgetV1alpha1 {");
  expect(text).toContain("export type Gadget = GadgetV1;");
  expect(text).not.toContain("Other");
});

test("--from-cluster without a group takes every CRD the server serves", async () => {
  const out = join(work, "all.ts");
  expect(await generateCommand(["types", "--from-cluster", "--kubeconfig", sandbox.kubeconfigPath, "--out", out])).toBe(0);
  expect(readFileSync(out, "utf8")).toContain("export type Other = OtherV1;");
});

test("--from-cluster refuses to run without an explicit kubeconfig, and with --crd", async () => {
  await expect(generateCommand(["types", "--from-cluster"])).rejects.toThrow(/needs --kubeconfig FILE \(the default kubeconfig is never read\)/);
  await expect(generateCommand(["types", "--from-cluster", "--kubeconfig", "x", "--crd", "y.yaml"])).rejects.toThrow(/exclude each other/);
  await expect(generateCommand(["types", "--from-cluster", "--kubeconfig", sandbox.kubeconfigPath, "--group", "none.io"])).rejects.toThrow(/serves no CustomResourceDefinition of group none\.io/);
});
