// More details where the sandbox once differed from kube-apiserver (after sandbox-fidelity.e2e.ts, -2 and -3),
// held to the real one on both targets: owner references with two controllers, the metadata a /status write
// keeps, the answers to a body or a continue token the server cannot read, one store of Events behind
// core/v1 and events.k8s.io/v1.
//
//   cd test/e2e && KOBUN_E2E_TARGET=sandbox bun test ./sandbox-fidelity-4.e2e.ts

import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createNamespace, EXAMPLES, rawRequest } from "./harness/kube.ts";
import { ROOT } from "./harness/operator.ts";
import { targetSuite } from "./harness/suite.ts";
import { selectedTargets, type Target, type TargetName } from "./harness/target.ts";

const MERGE = "application/merge-patch+json";
const cms = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;
const examples = (ns: string) => `/apis/kobun.dev/v1/namespaces/${ns}/kobunexamples`;
const owner = (name: string, uid: string, controller?: boolean) =>
  ({ apiVersion: "v1", kind: "ConfigMap", name, uid, ...(controller === undefined ? {} : { controller }) });

describe.each(selectedTargets())("sandbox fidelity (4) on %s", (targetName: TargetName) => {
  const need = targetSuite(targetName, { crds: [join(ROOT, "handlers/kobunexample.crd.yaml")], cleanup: [EXAMPLES] });
  /** a request and its JSON answer */
  const api = async (t: Target, method: string, path: string, body?: unknown, type?: string) => {
    const response = await rawRequest(t.client, method, path, body, type);
    return { status: response.status, body: (await response.json()) as any };
  };

  test("owner references: only one may be the controller; each further one is a cause naming the first", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    // owners that exist, so that no garbage collector takes the objects away meanwhile
    const uids: string[] = [];
    for (const name of ["a", "b", "c", "d"]) {
      uids.push((await api(t, "POST", cms(ns), { metadata: { name } })).body.metadata.uid);
    }
    const refs = ["a", "b", "c", "d"].map((name, i) => owner(name, uids[i]!, i !== 1));
    // the value is the list as the server writes it: its fields in their order, whatever order they came in
    const sent = refs.map(({ controller, uid, name, kind, apiVersion }) => ({ controller, uid, name, kind, apiVersion }));
    const r = await api(t, "POST", cms(ns), { metadata: { name: "two", ownerReferences: sent } });
    const only = (other: string) => `Invalid value: ${JSON.stringify(refs)}: Only one reference can have Controller `
      + `set to true. Found "true" in references for ConfigMap/a and ConfigMap/${other}`;
    expect([r.status, r.body.reason, r.body.message]).toEqual([422, "Invalid", 'ConfigMap "two" is invalid: '
      + `[metadata.ownerReferences: ${only("c")}, metadata.ownerReferences: ${only("d")}]`]);
    expect(r.body.details.causes).toEqual(["c", "d"].map((other) =>
      ({ reason: "FieldValueInvalid", message: only(other), field: "metadata.ownerReferences" })));
    const one = await api(t, "POST", cms(ns), { metadata: { name: "one", ownerReferences: refs.slice(0, 2) } });
    expect(one.status).toBe(201);
    const update = await api(t, "PATCH", `${cms(ns)}/one`, { metadata: { ownerReferences: refs.slice(0, 3) } }, MERGE);
    expect([update.status, update.body.details?.causes?.length]).toEqual([422, 1]);
  }, 60_000);

  test("a /status write takes the sent metadata on built-in kinds (not a Deployment's labels), none on a custom "
    + "resource", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    const meta = { labels: { app: "d" }, annotations: { kept: "1", gone: "1" } };
    const template = { metadata: { labels: { app: "d" } }, spec: { containers: [{ name: "c", image: "busybox" }] } };
    const deployments = `/apis/apps/v1/namespaces/${ns}/deployments`;
    const spec = { replicas: 1, selector: { matchLabels: { app: "d" } }, template };
    expect((await api(t, "POST", deployments, { metadata: { name: "d", ...meta }, spec })).status).toBe(201);
    const pods = `/api/v1/namespaces/${ns}/pods`;
    expect((await api(t, "POST", pods, { metadata: { name: "p", ...meta }, spec: template.spec })).status).toBe(201);
    expect((await api(t, "POST", examples(ns), { apiVersion: "kobun.dev/v1", kind: "KobunExample",
      metadata: { name: "w", ...meta }, spec: {} })).status).toBe(201);
    const { uid } = (await api(t, "POST", cms(ns), { metadata: { name: "o" } })).body.metadata;
    const change = {
      labels: { app: "d", added: "1" }, annotations: { gone: null, new: "2" }, finalizers: ["e2e.kobun.dev/hold"],
      ownerReferences: [owner("o", uid)],
    };
    const written = async (path: string) => {
      const r = await api(t, "PATCH", `${path}/status`, { metadata: change, status: {} }, MERGE);
      const m = r.body.metadata;
      return [r.status, m.labels, m.annotations, m.finalizers, m.ownerReferences?.length, m.generation];
    };
    const annotations = { kept: "1", new: "2" };
    const finalizers = change.finalizers;
    expect(await written(`${deployments}/d`)).toEqual([200, meta.labels, annotations, finalizers, 1, 1]);
    expect(await written(`${pods}/p`)).toEqual([200, change.labels, annotations, finalizers, undefined, 1]);
    expect(await written(`${examples(ns)}/w`)).toEqual([200, meta.labels, meta.annotations, undefined, undefined, 1]);
    // a PUT of /status: what it leaves out is gone
    const current = (await api(t, "GET", `${deployments}/d`)).body;
    const put = await api(t, "PUT", `${deployments}/d/status`,
      { ...current, metadata: { ...current.metadata, annotations: { only: "1" }, finalizers: undefined } });
    expect([put.status, put.body.metadata.annotations, put.body.metadata.finalizers]).toEqual([200, { only: "1" },
      undefined]);
    expect((await api(t, "PATCH", `${pods}/p`, { metadata: { finalizers: null } }, MERGE)).status).toBe(200);
  }, 60_000);
});
