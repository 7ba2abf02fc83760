// Table output for `kubectl get` (issue 18): the built-in printers' columns, a CRD's
// additionalPrinterColumns (default: Age), PartialObjectMetadata rows, JSON when not asked.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startSandbox, type Sandbox } from "../src/index.ts";
import { humanDuration, wantsTable } from "../src/table.ts";
import { api, WatchReader } from "./helpers.ts";

const KUBECTL_ACCEPT = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
const CRD = {
  apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata: { name: "gadgets.example.com" },
  spec: {
    group: "example.com", scope: "Namespaced", names: { kind: "Gadget", plural: "gadgets" },
    versions: [
      {
        name: "v1", served: true, storage: true, schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
        additionalPrinterColumns: [
          { name: "Size", type: "integer", jsonPath: ".spec.size" },
          { name: "First", type: "string", jsonPath: ".spec.items[0].name", priority: 1 },
          { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
        ],
      },
      { name: "v2", served: true, storage: false, schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } } },
    ],
  },
};

let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox();
  await api(sb, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", CRD);
});
afterAll(() => sb.stop());

const table = async (path: string) => (await fetch(sb.url + path, { headers: { accept: KUBECTL_ACCEPT } })).json() as Promise<any>;
const names = (t: any) => t.columnDefinitions.map((c: any) => `${c.name}${c.priority ? "*" : ""}`);

describe("Table output", () => {
  test("a LIST of configmaps: Name, Data, Age; rows carry PartialObjectMetadata", async () => {
    await api(sb, "POST", "/api/v1/namespaces/default/configmaps", { metadata: { name: "two" }, data: { a: "1" }, binaryData: { b: "AA==" } });
    const t = await table("/api/v1/namespaces/default/configmaps");
    expect({ kind: t.kind, apiVersion: t.apiVersion, columns: names(t) }).toEqual({ kind: "Table", apiVersion: "meta.k8s.io/v1", columns: ["Name", "Data", "Age"] });
    expect(t.metadata.resourceVersion).toBeString();
    expect(t.rows[0].cells.slice(0, 2)).toEqual(["two", 2]);
    expect(t.rows[0].cells[2]).toMatch(/^\d+s$/);
    expect(t.rows[0].object).toMatchObject({ kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: { name: "two", namespace: "default" } });
  });

  test("secrets: Name, Type (defaulted to Opaque, as the real server does), Data, Age", async () => {
    await api(sb, "POST", "/api/v1/namespaces/default/secrets", { metadata: { name: "s" }, data: { a: "MQ==", b: "Mg==" } });
    const t = await table("/api/v1/namespaces/default/secrets/s");
    expect([names(t), t.rows[0].cells.slice(0, 3)]).toEqual([["Name", "Type", "Data", "Age"], ["s", "Opaque", 2]]);
  });

  test("a GET of a deployment: Ready from status and spec; wide columns have priority 1", async () => {
    await api(sb, "POST", "/apis/apps/v1/namespaces/default/deployments", {
      metadata: { name: "web" }, spec: { replicas: 3, selector: { matchLabels: { app: "web" } }, template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "c", image: "nginx:1" }] } } },
    });
    const t = await table("/apis/apps/v1/namespaces/default/deployments/web");
    expect(names(t)).toEqual(["Name", "Ready", "Up-to-date", "Available", "Age", "Containers*", "Images*", "Selector*"]);
    expect(t.rows).toHaveLength(1);
    expect([...t.rows[0].cells.slice(0, 4), ...t.rows[0].cells.slice(5)]).toEqual(["web", "0/3", 0, 0, "c", "nginx:1", "app=web"]);
  });

  test("a custom resource: Name, then its version's additionalPrinterColumns, or Age without any", async () => {
    await api(sb, "POST", "/apis/example.com/v1/namespaces/default/gadgets", { apiVersion: "example.com/v1", kind: "Gadget", metadata: { name: "g" }, spec: { size: 7, items: [{ name: "x" }] } });
    const v1 = await table("/apis/example.com/v1/namespaces/default/gadgets");
    expect(names(v1)).toEqual(["Name", "Size", "First*", "Age"]);
    expect(v1.rows[0].cells.slice(0, 3)).toEqual(["g", 7, "x"]);
    expect(v1.rows[0].cells[3]).toMatch(/^\d+s$/);
    const v2 = await table("/apis/example.com/v2/namespaces/default/gadgets");
    expect(names(v2)).toEqual(["Name", "Age"]);
  });

  test("a watch asked for Tables: one-row Table events, the columns in the first only (kubectl get -w)", async () => {
    const w = await WatchReader.open(sb, "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=" + (await api(sb, "GET", "/api/v1/namespaces/default/configmaps")).body.metadata.resourceVersion,
      { headers: { accept: KUBECTL_ACCEPT } });
    try {
      await api(sb, "POST", "/api/v1/namespaces/default/configmaps", { metadata: { name: "w1" }, data: { a: "1" } });
      await api(sb, "POST", "/api/v1/namespaces/default/configmaps", { metadata: { name: "w2" } });
      const first = await w.nextChange();
      const second = await w.nextChange();
      expect([first.type, first.object.kind, names(first.object), first.object.rows[0].cells.slice(0, 2)]).toEqual(["ADDED", "Table", ["Name", "Data", "Age"], ["w1", 1]]);
      // as kube-apiserver v1.37.2 sends them (checked against test/cluster)
      expect([second.object.columnDefinitions, second.object.rows[0].cells.slice(0, 2)]).toEqual([undefined, ["w2", 0]]);
      expect(second.object.metadata.resourceVersion).toBe(second.object.rows[0].object.metadata.resourceVersion);
      expect(second.object.rows[0].object.metadata.name).toBe("w2");
    } finally {
      w.ac.abort();
    }
  });

  test("JSON unless a Table is asked for first", async () => {
    expect(wantsTable(KUBECTL_ACCEPT)).toBe(true);
    expect(wantsTable("application/json")).toBe(false);
    expect(wantsTable(null)).toBe(false);
    expect(wantsTable("application/json, application/json;as=Table;v=v1;g=meta.k8s.io")).toBe(false);
    expect(wantsTable("application/json;as=Table;v=v1;g=example.com,application/json")).toBe(false);
    const plain = (await api(sb, "GET", "/api/v1/namespaces/default/configmaps")).body;
    expect(plain.kind).toBe("ConfigMapList");
  });

  test("ages read like kubectl's", () => {
    expect([5e3, 119e3, 150e3, 600e3, 7200e3, 3 * 86400e3, 10 * 86400e3, 800 * 86400e3].map(humanDuration))
      .toEqual(["5s", "119s", "2m30s", "10m", "120m", "3d", "10d", "2y"]);
  });
});
