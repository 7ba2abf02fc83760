// Protobuf request bodies (issue 18): what kubectl's typed clients send for built-in kinds,
// decoded into the objects' JSON form. The bodies are real ones, captured from kubectl v1.37.2.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startSandbox, type Sandbox } from "../src/index.ts";
import { decodeProtobufBody } from "../src/protobuf.ts";
import { api } from "./helpers.ts";
import { KUBECTL_PROTOBUF_BODIES as BODIES } from "./protobuf-bodies.ts";
import protobuf from "protobufjs/light.js";
import descriptor from "../src/kube-protos.json" with { type: "json" };

const PROTOBUF = "application/vnd.kubernetes.protobuf";
const bytes = (b64: string) => new Uint8Array(Buffer.from(b64, "base64"));

let sb: Sandbox;
beforeAll(async () => { sb = await startSandbox(); });
afterAll(() => sb.stop());

async function post(path: string, b64: string) {
  const res = await fetch(sb.url + path, { method: "POST", headers: { "content-type": PROTOBUF }, body: bytes(b64) });
  return { status: res.status, body: await res.json() as any };
}

/** a Pod as client-go's typed client would put it on the wire (protobufjs from the same descriptor) */
function podOnTheWire(spec: Record<string, unknown>): Uint8Array {
  const root = protobuf.Root.fromJSON(descriptor as protobuf.INamespace);
  const pod = root.lookupType("k8s.io.api.core.v1.Pod");
  const unknown = root.lookupType("k8s.io.apimachinery.pkg.runtime.Unknown");
  const raw = pod.encode(pod.fromObject({ metadata: { name: "p" }, spec })).finish();
  return new Uint8Array([0x6b, 0x38, 0x73, 0, ...unknown.encode(unknown.fromObject({ typeMeta: { apiVersion: "v1", kind: "Pod" }, raw })).finish()]);
}

describe("protobuf request bodies", () => {
  test("embedded structs are inlined as in JSON: a volume's source, a probe's handler, a LocalObjectReference's name", () => {
    const spec = decodeProtobufBody(podOnTheWire({
      containers: [{
        name: "c", image: "i",
        env: [{ name: "E", valueFrom: { configMapKeyRef: { localObjectReference: { name: "cm" }, key: "k" } } }],
        livenessProbe: { handler: { exec: { command: ["true"] } }, periodSeconds: 5 },
      }],
      volumes: [{ name: "v", volumeSource: { secret: { secretName: "s" } } }],
      ephemeralContainers: [{ ephemeralContainerCommon: { name: "debug", image: "busybox" }, targetContainerName: "c" }],
    })).spec;
    expect(spec.containers[0].env).toEqual([{ name: "E", valueFrom: { configMapKeyRef: { name: "cm", key: "k" } } }]);
    expect(spec.containers[0].livenessProbe).toEqual({ exec: { command: ["true"] }, periodSeconds: 5 });
    expect(spec.volumes).toEqual([{ name: "v", secret: { secretName: "s" } }]);
    expect(spec.ephemeralContainers).toEqual([{ name: "debug", image: "busybox", targetContainerName: "c" }]);
  });

  test("decoded like the JSON kubectl would send: empty Go fields dropped, a pointer's zero kept", () => {
    expect(decodeProtobufBody(bytes(BODIES.namespace))).toEqual({ apiVersion: "v1", kind: "Namespace", metadata: { name: "pb-ns" }, spec: {}, status: {} });
    expect(decodeProtobufBody(bytes(BODIES.configmap))).toEqual({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "pb-cm", namespace: "pb-ns" }, data: { a: "1" } });
    // Secret data is bytes: base64 in JSON
    expect(decodeProtobufBody(bytes(BODIES.secret)).data).toEqual({ k: Buffer.from("v").toString("base64") });
    const d = decodeProtobufBody(bytes(BODIES.deployment));
    expect(d.spec.replicas).toBe(0);
    expect(d.spec.template.spec.containers).toEqual([{ name: "nginx", image: "nginx:1", ports: [{ containerPort: 8080 }], resources: {} }]);
    expect(d.spec.template.metadata).toEqual({ labels: { app: "pb-d" } });
  });

  test("kubectl create namespace / configmap / secret / deployment bodies create the objects", async () => {
    expect((await post("/api/v1/namespaces", BODIES.namespace)).status).toBe(201);
    expect((await post("/api/v1/namespaces/pb-ns/configmaps", BODIES.configmap)).body.data).toEqual({ a: "1" });
    expect((await post("/api/v1/namespaces/pb-ns/secrets", BODIES.secret)).status).toBe(201);
    const dep = await post("/apis/apps/v1/namespaces/pb-ns/deployments", BODIES.deployment);
    expect({ status: dep.status, kind: dep.body.kind, replicas: dep.body.spec.replicas }).toEqual({ status: 201, kind: "Deployment", replicas: 0 });
    expect(sb.store.get("", "configmaps", "pb-ns", "pb-cm")?.metadata.uid).toBeString();
  });

  test("kubectl auth can-i sends its SelfSubjectAccessReview in protobuf", async () => {
    const r = await post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", BODIES.selfSubjectAccessReview);
    expect(r.status).toBe(201);
    expect(r.body.spec.resourceAttributes).toEqual({ namespace: "pb-ns", verb: "create", resource: "configmaps" });
    expect(r.body.status).toEqual({ allowed: true });
  });

  test("bad protobuf: 400 with the reason; a kind without a schema here: 415", async () => {
    const noMagic = await fetch(sb.url + "/api/v1/namespaces", { method: "POST", headers: { "content-type": PROTOBUF }, body: "{}" });
    expect(noMagic.status).toBe(400);
    expect(((await noMagic.json()) as any).message).toMatch(/not a Kubernetes protobuf message/);
    const truncated = await post("/api/v1/namespaces", Buffer.from(bytes(BODIES.configmap).subarray(0, 30)).toString("base64"));
    expect(truncated.status).toBe(400);
    expect(truncated.body.message).toMatch(/could not be decoded as protobuf/);
    // a runtime.Unknown of kind Frobnicator: magic, then field 1 (TypeMeta) only
    const typeMeta = Buffer.concat([Buffer.from([0x0a, 2]), Buffer.from("v1"), Buffer.from([0x12, 11]), Buffer.from("Frobnicator")]);
    const unknown = Buffer.concat([Buffer.from("k8s\0"), Buffer.from([0x0a, typeMeta.length]), typeMeta]);
    expect((await post("/api/v1/namespaces", unknown.toString("base64"))).status).toBe(415);
    // JSON still works
    expect((await api(sb, "POST", "/api/v1/namespaces", { metadata: { name: "json-ns" } })).status).toBe(201);
  });
});
