// OpenAPI v2 (/openapi/v2) read by real clients on both targets (and two v3 details found on
// the way): `kubectl explain
// --output=plaintext-openapiv2` (kubectl's v2 reader, kube-openapi's proto models, over client-go's
// protobuf request) for built-in kinds and CRDs, a CRD that comes after kubectl cached the
// document (its HTTP cache revalidates by ETag), and the protobuf document client-go's
// discovery OpenAPISchema() asks for. The expected texts are the real server's (expected/).
//
//   cd test/e2e && KOBUN_E2E_TARGET=sandbox bun test ./kubectl-openapi-v2.e2e.ts

import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { decodeOpenAPIV2 } from "../../packages/sandbox/src/openapi-v2-pb.ts";
import type { KubeClient } from "../../src/kube/client.ts";
import { eventually, uniqueName } from "./harness/kube.ts";
import { kubectlTarget } from "./harness/kubectl.ts";
import { ROOT } from "./harness/operator.ts";
import { selectedTargets, type TargetName } from "./harness/target.ts";

const CLIENT_GO_ACCEPT = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
const expected = (file: string) => Bun.file(join(import.meta.dir, "expected", file)).text();
const V2 = "--output=plaintext-openapiv2";

/** GET /openapi/v2 as client-go's discovery sends it */
async function openapiV2(client: KubeClient, headers: Record<string, string> = {}): Promise<Response> {
  const tls = client.connection.tls;
  const all = { ...(await client.connection.authHeaders()), accept: CLIENT_GO_ACCEPT, ...headers };
  return fetch(`${client.server}/openapi/v2`, { headers: all, ...(tls ? { tls } : {}) } as RequestInit);
}

/** a decoded gnostic message without empty lists, extension values parsed from their YAML (servers may write it differently) */
function plain(v: any): any {
  if (Array.isArray(v)) return v.map(plain);
  if (!v || typeof v !== "object") return v;
  if (typeof v.yaml === "string") return { yaml: Bun.YAML.parse(v.yaml) };
  return Object.fromEntries(Object.entries(v).filter(([, x]) => !(Array.isArray(x) && x.length === 0)).map(([k, x]) => [k, plain(x)]));
}

const crd = (group: string) => ({
  apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata: { name: `widgets.${group}` },
  spec: {
    group, scope: "Namespaced", names: { kind: "Widget", plural: "widgets", singular: "widget" },
    versions: [{
      name: "v1", served: true, storage: true,
      schema: { openAPIV3Schema: { type: "object", properties: { spec: { type: "object", properties: { colour: { type: "string", description: "what it looks like" } } } } } },
    }],
  },
});
const CRDS = { group: "apiextensions.k8s.io", version: "v1", plural: "customresourcedefinitions", kind: "CustomResourceDefinition", namespaced: false, statusSubresource: true };

describe.each(selectedTargets())("OpenAPI v2 for kubectl and client-go on %s", (targetName: TargetName) => {
  const need = kubectlTarget(targetName, [join(ROOT, "handlers/kobunexample.crd.yaml"), join(ROOT, "test/e2e/handlers/kobunflaky.crd.yaml")]);

  test("explain --output=plaintext-openapiv2 of built-in kinds reads as on the real server", async () => {
    const { k } = need();
    expect(await k.ok(["explain", "configmap", V2])).toBe(await expected("kubectl-explain-v2-configmap.txt"));
    expect(await k.ok(["explain", "deployment.spec.strategy", V2])).toBe(await expected("kubectl-explain-v2-deployment-strategy.txt"));
  }, 60_000);

  test("explain --output=plaintext-openapiv2 of CRDs, from their schemas made v2", async () => {
    const { k } = need();
    // the real server publishes a new CRD's schema a moment after the CRD is served
    await eventually("the CRD schemas in /openapi/v2", async () => (await k.run(["explain", "kobunflakies.spec", V2])).code === 0, { timeoutMs: 30_000, intervalMs: 500 });
    expect(await k.ok(["explain", "kobunexamples", V2])).toBe(await expected("kubectl-explain-v2-kobunexample.txt"));
    expect(await k.ok(["explain", "kobunflakies.spec", V2]))
      .toBe("KIND:     KobunFlaky\nVERSION:  e2e.kobun.dev/v1\n\nRESOURCE: spec <Object>\n\nDESCRIPTION:\n     <empty>\n\nFIELDS:\n   delay\t<number>\n\n   failTimes\t<integer>\n\n");
  }, 60_000);

  // found while comparing v2: what v3 served lacked too (the module's api/openapi-spec has no enums)
  test("explain (OpenAPI v3) shows the server's enums and a CRD's TypeMeta fields", async () => {
    const { k } = need();
    await eventually("the CRD schemas in /openapi/v3", async () => (await k.run(["explain", "kobunexamples.spec"])).code === 0, { timeoutMs: 30_000, intervalMs: 500 });
    expect(await k.ok(["explain", "deployment.spec.strategy.type"])).toBe(await expected("kubectl-explain-deployment-strategy-type.txt"));
    expect(await k.ok(["explain", "kobunexamples"])).toBe(await expected("kubectl-explain-kobunexample.txt"));
  }, 60_000);

  test("a CRD created after kubectl cached the document is explained once served, and gone once deleted", async () => {
    const { t, k } = need();
    await k.ok(["explain", "configmap", V2]);
    const group = `${uniqueName("v2")}.e2e.kobun.dev`;
    await t.client.create(CRDS, null, crd(group));
    try {
      const field = `widgets.${group}`;
      await eventually("the new CRD in /openapi/v2", async () => (await k.run(["explain", `${field}.spec`, V2])).code === 0, { timeoutMs: 30_000, intervalMs: 500 });
      expect(await k.ok(["explain", `${field}.spec.colour`, V2])).toBe(`KIND:     Widget\nVERSION:  ${group}/v1\n\nFIELD:    colour <string>\n\nDESCRIPTION:\n     what it looks like\n`);
    } finally {
      await t.client.delete(CRDS, null, `widgets.${group}`);
    }
    await eventually("the CRD gone from explain", async () => (await k.run(["explain", `widgets.${group}`, V2])).code !== 0, { timeoutMs: 30_000, intervalMs: 500 });
  }, 90_000);

  test("client-go's protobuf request: gnostic's Document with the real server's definitions, ETag and 304", async () => {
    const { t } = need();
    const res = await openapiV2(t.client);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/com.github.proto-openapi.spec.v2.v1.0+protobuf");
    const etag = res.headers.get("etag")!;
    expect(etag).toMatch(/^"[0-9A-F]{128}"$/);
    const doc = decodeOpenAPIV2(new Uint8Array(await res.arrayBuffer()));
    const want = JSON.parse(await expected("openapi-v2-definitions.json")) as Record<string, unknown>;
    const got = Object.fromEntries(Object.keys(want).map((n) => [n, plain(doc.definitions.additional_properties.find((e: any) => e.name === n)?.value)]));
    expect(got).toEqual(want);
    // JSON when asked for JSON, under the same ETag
    const json = await openapiV2(t.client, { accept: "application/json" });
    expect({ type: json.headers.get("content-type"), etag: json.headers.get("etag") }).toEqual({ type: "application/json", etag });
    expect(((await json.json()) as any).definitions["io.k8s.api.core.v1.ConfigMap"].description).toBe("ConfigMap holds configuration data for pods to consume.");
    expect((await openapiV2(t.client, { "if-none-match": etag })).status).toBe(304);
  }, 60_000);
});
