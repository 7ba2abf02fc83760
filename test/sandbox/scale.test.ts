// The /scale subresource of the workload kinds (`kubectl scale`, issue 18).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startSandbox, type Sandbox } from "../../src/sandbox/index.ts";
import { api } from "./helpers.ts";

const DEPLOY = "/apis/apps/v1/namespaces/default/deployments";
let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox();
  await api(sb, "POST", DEPLOY, {
    metadata: { name: "web" },
    spec: { replicas: 2, selector: { matchLabels: { app: "web" }, matchExpressions: [{ key: "tier", operator: "In", values: ["a", "b"] }] }, template: { spec: { containers: [{ name: "c", image: "i" }] } } },
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
});
