// Protobuf responses (issue 18): a client whose Accept puts application/vnd.kubernetes.protobuf
// first (client-go's typed clients) gets built-in objects in the "k8s\0" envelope, which decode
// to the same object as the JSON answer; custom resources and lists stay JSON.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startSandbox, type Sandbox } from "../src/index.ts";
import { decodeProtobufBody } from "../src/protobuf.ts";
import { api } from "./helpers.ts";

const PROTOBUF = "application/vnd.kubernetes.protobuf";
const CLIENT_GO = `${PROTOBUF}, */*`;

let sb: Sandbox;
beforeAll(async () => { sb = await startSandbox(); });
afterAll(() => sb.stop());

const send = (method: string, path: string, body?: unknown) => fetch(sb.url + path, {
  method, headers: { accept: CLIENT_GO, ...(body ? { "content-type": method === "PATCH" ? "application/merge-patch+json" : "application/json" } : {}) },
  ...(body ? { body: JSON.stringify(body) } : {}),
});

/** a protobuf answer, decoded, beside the object as JSON GET answers it */
async function compared(res: Response, path: string) {
  expect(res.headers.get("content-type")).toBe(PROTOBUF);
  const decoded = decodeProtobufBody(new Uint8Array(await res.arrayBuffer()));
  return { decoded, json: (await api(sb, "GET", path)).body };
}

describe("protobuf responses", () => {
  test("create, get and patch of built-in kinds answer protobuf that decodes to the JSON object", async () => {
    const objects: [string, any][] = [
      ["/api/v1/namespaces/default/secrets", { apiVersion: "v1", kind: "Secret", metadata: { name: "s", labels: { a: "b" } }, data: { k: Buffer.from("v").toString("base64") } }],
      ["/apis/coordination.k8s.io/v1/namespaces/default/leases", { apiVersion: "coordination.k8s.io/v1", kind: "Lease", metadata: { name: "l" }, spec: { holderIdentity: "me", leaseDurationSeconds: 15, renewTime: "2026-12-01T12:00:00.123456Z" } }],
      ["/api/v1/namespaces/default/pods", { apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, spec: {
        containers: [{ name: "c", image: "i", env: [{ name: "E", valueFrom: { configMapKeyRef: { name: "cm", key: "k" } } }], resources: { limits: { cpu: "1", memory: "64Mi" } }, livenessProbe: { httpGet: { port: "http" } } }],
        volumes: [{ name: "v", configMap: { name: "x" } }],
      } }],
      ["/apis/apps/v1/namespaces/default/deployments", { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "d" }, spec: { replicas: 0, selector: { matchLabels: { a: "b" } }, template: { metadata: { labels: { a: "b" } }, spec: { containers: [{ name: "c", image: "i" }] } } } }],
    ];
    for (const [path, body] of objects) {
      const created = await send("POST", path, body);
      expect(created.status).toBe(201);
      const { decoded, json } = await compared(created, `${path}/${body.metadata.name}`);
      expect(decoded).toEqual(json);
      const got = await compared(await send("GET", `${path}/${body.metadata.name}`), `${path}/${body.metadata.name}`);
      expect(got.decoded).toEqual(got.json);
    }
    const patched = await compared(await send("PATCH", "/api/v1/namespaces/default/secrets/s", { metadata: { labels: { c: "d" } } }), "/api/v1/namespaces/default/secrets/s");
    expect(patched.decoded.metadata.labels).toEqual({ a: "b", c: "d" });
    expect(patched.decoded).toEqual(patched.json);
  });

  test("lists, custom resources, errors and JSON-first clients get JSON", async () => {
    expect((await send("GET", "/api/v1/namespaces/default/secrets")).headers.get("content-type")).toBe("application/json");
    expect((await send("GET", "/api/v1/namespaces/default/secrets/missing")).headers.get("content-type")).toBe("application/json");
    const json = await fetch(`${sb.url}/api/v1/namespaces/default/secrets/s`, { headers: { accept: `application/json, ${PROTOBUF}` } });
    expect(json.headers.get("content-type")).toBe("application/json");
    await api(sb, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
      apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata: { name: "gizmos.pb.example.com" },
      spec: { group: "pb.example.com", scope: "Namespaced", names: { kind: "Gizmo", plural: "gizmos" }, versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } } }] },
    });
    const cr = await send("POST", "/apis/pb.example.com/v1/namespaces/default/gizmos", { apiVersion: "pb.example.com/v1", kind: "Gizmo", metadata: { name: "g" } });
    expect({ status: cr.status, type: cr.headers.get("content-type") }).toEqual({ status: 201, type: "application/json" });
  });
});
