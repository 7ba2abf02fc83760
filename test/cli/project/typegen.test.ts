// `kobun generate types --crd FILE`: interfaces for every version of a CRD, handling
// int-or-string, nullable, enums, additionalProperties and preserve-unknown-fields; the output
// typechecks (tsc) and refuses what the schema refuses.

import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { typesFromCRDs } from "../../../src/cli/project/typegen.ts";

const root = join(import.meta.dir, "..", "..", "..");
const work = mkdtempSync(join(tmpdir(), "kobun-typegen-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const crd = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "widgets.example.com" },
  spec: {
    group: "example.com",
    names: { kind: "Widget", plural: "widgets" },
    versions: ["v1beta1", "v1"].map((name) => ({
      name, served: true, storage: name === "v1",
      schema: { openAPIV3Schema: { type: "object", properties: {
        spec: { type: "object", required: ["port", "mode"], properties: {
          port: { "x-kubernetes-int-or-string": true, description: "A port, by number or name." },
          mode: { type: "string", enum: ["fast", "safe"] },
          owner: { type: "string", nullable: true },
          labels: { type: "object", additionalProperties: { type: "string" } },
          raw: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
          "weird-key": { type: "array", items: { type: "integer" } },
          ...(name === "v1" ? { replicas: { type: "integer" } } : {}),
        } },
        status: { type: "object", properties: { ready: { type: "boolean" } } },
      } } },
    })),
  },
};

async function tsc(dir: string): Promise<string> {
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({
    compilerOptions: { strict: true, noEmit: true, module: "Preserve", moduleResolution: "bundler", target: "ESNext", lib: ["ESNext"], types: ["bun"], typeRoots: [join(root, "node_modules/@types")], skipLibCheck: true, allowImportingTsExtensions: true, paths: { kobun: [join(root, "src/index.ts")] } },
    include: ["./*.ts"],
  }));
  const child = Bun.spawn([join(root, "node_modules/.bin/tsc"), "--pretty", "false", "-p", dir], { stdout: "pipe", stderr: "pipe" });
  const [out, err] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return (out + err).trim();
}

describe("kobun generate types", () => {
  test("every version gets an interface; the storage version also gets the kind's name", () => {
    const text = typesFromCRDs([crd]);
    expect(text).toContain("export interface WidgetV1beta1 {");
    expect(text).toContain("export interface WidgetV1 {");
    expect(text).toContain("export type Widget = WidgetV1;");
    expect(text).toContain('apiVersion?: "example.com/v1";');
    expect(text).toContain("port: number | string;");
    expect(text).toContain('mode: "fast" | "safe";');
    expect(text).toContain("owner?: string | null;");
    expect(text).toContain("/** A port, by number or name. */");
    expect(text).toContain('"weird-key"?: number[];');
    expect(text.split("replicas?: number;")).toHaveLength(2); // in v1 only
  });

  test("a kind of several groups is named with its group; groups that read alike are numbered", () => {
    const of = (group: string) => ({
      kind: "CustomResourceDefinition", metadata: { name: `certs.${group}` },
      spec: { group, names: { kind: "Cert", plural: "certs" }, versions: [{ name: "v1", served: true, storage: true }] },
    });
    const exported = typesFromCRDs([of("a-b.io"), of("a.b.io"), of("x.io")]).split("\n")
      .filter((line) => line.startsWith("export type"));
    expect(exported).toEqual([
      "export type CertABIo = CertABIoV1;", "export type CertABIo2 = CertABIo2V1;", "export type CertXIo = CertXIoV1;",
    ]);
  });

  test("the kind's own name: the storage version, or when it is not served the served one kubectl picks", () => {
    const versions = (storage: string, unserved: string[]) => ({
      kind: "CustomResourceDefinition", metadata: { name: "gears.example.com" },
      spec: {
        group: "example.com", names: { kind: "Gear", plural: "gears" },
        versions: ["v1alpha1", "v1beta1", "v1beta2", "v1", "v2beta1"]
          .map((name) => ({ name, served: !unserved.includes(name), storage: name === storage })),
      },
    });
    const alias = (crd: object) => typesFromCRDs([crd]).split("\n").filter((line) => line.startsWith("export type"));
    expect(alias(versions("v1beta1", []))).toEqual(["export type Gear = GearV1beta1;"]);
    expect(alias(versions("v1beta1", ["v1beta1"]))).toEqual(["export type Gear = GearV1;"]);
    expect(alias(versions("v1", ["v1"]))).toEqual(["export type Gear = GearV2beta1;"]);
    expect(alias(versions("v1", ["v1", "v2beta1"]))).toEqual(["export type Gear = GearV1beta2;"]);
  });

  test("the output typechecks, and refuses values the schema refuses", async () => {
    writeFileSync(join(work, "widgets.ts"), typesFromCRDs([crd]));
    writeFileSync(join(work, "use.ts"), [
      'import type { Widget, WidgetV1beta1 } from "./widgets.ts";',
      'export const ok: Widget = { metadata: { name: "w" }, spec: { port: "http", mode: "safe", owner: null, labels: { a: "b" }, raw: { any: [1] }, replicas: 2 }, status: { ready: true } };',
      'export const old: WidgetV1beta1 = { metadata: {}, spec: { port: 80, mode: "fast" } };',
      '// @ts-expect-error: not one of the enum',
      'export const badMode: Widget = { metadata: {}, spec: { port: 1, mode: "slow" } };',
      '// @ts-expect-error: labels are strings',
      'export const badLabel: Widget = { metadata: {}, spec: { port: 1, mode: "fast", labels: { a: 1 } } };',
      '// @ts-expect-error: v1beta1 has no replicas',
      'export const badOld: WidgetV1beta1 = { metadata: {}, spec: { port: 1, mode: "fast", replicas: 1 } };',
    ].join("\n"));
    expect(await tsc(work)).toBe("");
  }, 60_000);

  test("the repo's own CRDs (the example's, the peering ones) generate code that typechecks", async () => {
    const files = ["handlers/kobunexample.crd.yaml", "crds/peering-kobun.dev.yaml", "crds/peering-kopf.dev.yaml"];
    const docs = files.flatMap((f) => parseAllDocuments(readFileSync(join(root, f), "utf8")).map((d) => d.toJS()));
    const dir = mkdtempSync(join(work, "repo-"));
    const text = typesFromCRDs(docs);
    expect(text).toContain("export type KobunExample = KobunExampleV1;");
    writeFileSync(join(dir, "crds.ts"), text);
    expect(await tsc(dir)).toBe("");
  }, 60_000);

  test("a file without CRDs is refused with a clear message", () => {
    expect(() => typesFromCRDs([{ kind: "ConfigMap" }])).toThrow(/no CustomResourceDefinition/);
  });
});
