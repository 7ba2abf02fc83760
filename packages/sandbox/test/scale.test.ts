// The /scale subresource of the workload kinds (`kubectl scale`, issue 18).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startSandbox, type Sandbox } from "../src/index.ts";
import { api } from "./helpers.ts";

const DEPLOY = "/apis/apps/v1/namespaces/default/deployments";
let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox();
  await api(sb, "POST", DEPLOY, {
    metadata: { name: "web" },
    spec: { replicas: 2, selector: { matchLabels: { app: "web" }, matchExpressions: [{ key: "tier", operator: "In", values: ["a", "b"] }] }, template: { metadata: { labels: { app: "web", tier: "a" } }, spec: { containers: [{ name: "c", image: "i" }] } } },
  });
});
afterAll(() => sb.stop());

describe("/scale", () => {
  test("GET: an autoscaling/v1 Scale of the deployment; discovery lists deployments/scale", async () => {
    const r = await api(sb, "GET", `${DEPLOY}/web/scale`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ kind: "Scale", apiVersion: "autoscaling/v1", metadata: { name: "web", namespace: "default" }, spec: { replicas: 2 }, status: { replicas: 0, selector: "app=web,tier in (a,b)" } });
    const apps = (await api(sb, "GET", "/apis/apps/v1")).body;
    expect(apps.resources.find((x: any) => x.name === "deployments/scale")).toMatchObject({ group: "autoscaling", version: "v1", kind: "Scale", verbs: ["get", "patch", "update"] });
  });

  test("PATCH (what kubectl scale sends) and PUT change spec.replicas only", async () => {
    const patched = await api(sb, "PATCH", `${DEPLOY}/web/scale`, { spec: { replicas: 5 } }, "application/merge-patch+json");
    expect({ status: patched.status, replicas: patched.body.spec.replicas }).toEqual({ status: 200, replicas: 5 });
    const put = await api(sb, "PUT", `${DEPLOY}/web/scale`, { ...patched.body, spec: { replicas: 0 } });
    expect(put.body.spec.replicas).toBe(0);
    const dep = (await api(sb, "GET", `${DEPLOY}/web`)).body;
    expect({ replicas: dep.spec.replicas, generation: dep.metadata.generation, image: dep.spec.template.spec.containers[0].image }).toEqual({ replicas: 0, generation: 3, image: "i" });
  });

  test("a stale resourceVersion → 409; a negative count → 422; kinds without /scale → 404", async () => {
    const stale = await api(sb, "PUT", `${DEPLOY}/web/scale`, { metadata: { name: "web", resourceVersion: "1" }, spec: { replicas: 1 } });
    expect(stale.status).toBe(409);
    expect((await api(sb, "PATCH", `${DEPLOY}/web/scale`, { spec: { replicas: -1 } }, "application/merge-patch+json")).status).toBe(422);
    await api(sb, "POST", "/api/v1/namespaces/default/configmaps", { metadata: { name: "c" } });
    expect((await api(sb, "GET", "/api/v1/namespaces/default/configmaps/c/scale")).status).toBe(404);
  });

  test("a CRD version's scale subresource: its paths, in discovery and on /scale", async () => {
    const crd = {
      apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata: { name: "pools.example.com" },
      spec: {
        group: "example.com", scope: "Namespaced", names: { kind: "Pool", plural: "pools" },
        versions: [{
          name: "v1", served: true, storage: true, schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
          subresources: { status: {}, scale: { specReplicasPath: ".spec.size", statusReplicasPath: ".status.ready", labelSelectorPath: ".status.selector" } },
        }],
      },
    };
    await api(sb, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
    const path = "/apis/example.com/v1/namespaces/default/pools";
    await api(sb, "POST", path, { apiVersion: "example.com/v1", kind: "Pool", metadata: { name: "p" }, spec: { size: 2, other: "x" } });
    await api(sb, "PATCH", `${path}/p/status`, { status: { ready: 1, selector: "app=p" } }, "application/merge-patch+json");
    const scale = (await api(sb, "GET", `${path}/p/scale`)).body;
    expect([scale.spec, scale.status]).toEqual([{ replicas: 2 }, { replicas: 1, selector: "app=p" }]);
    const patched = await api(sb, "PATCH", `${path}/p/scale`, { spec: { replicas: 4 } }, "application/merge-patch+json");
    expect(patched.body.spec.replicas).toBe(4);
    expect((await api(sb, "GET", `${path}/p`)).body.spec).toEqual({ size: 4, other: "x" });
    const discovery = (await api(sb, "GET", "/apis/example.com/v1")).body;
    expect(discovery.resources.map((r: any) => r.name)).toEqual(["pools", "pools/scale", "pools/status"]);
  });
});
