// Yet more details where the sandbox once differed from kube-apiserver (after sandbox-fidelity.e2e.ts and -2),
// held to the real one on both targets: what a DELETE answers and the options it takes, the write options
// (fieldManager, fieldValidation, force, dryRun together), server-side apply (several managers' conflicts, the
// configuration's own checks, the status subresource's fields), a Deployment's generation, and the apps/v1
// workloads' selector and replicas rules.
//
//   cd test/e2e && KOBUN_E2E_TARGET=sandbox bun test ./sandbox-fidelity-3.e2e.ts

import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createNamespace, EXAMPLES, rawRequest } from "./harness/kube.ts";
import { ROOT } from "./harness/operator.ts";
import { targetSuite } from "./harness/suite.ts";
import { selectedTargets, type Target, type TargetName } from "./harness/target.ts";

const MERGE = "application/merge-patch+json";
const APPLY = "application/apply-patch+yaml";
const cms = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;
const examples = (ns: string) => `/apis/kobun.dev/v1/namespaces/${ns}/kobunexamples`;
const cm = (name: string, meta: object = {}) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, ...meta } });
const example = (name: string, rest: object = {}) =>
  ({ apiVersion: "kobun.dev/v1", kind: "KobunExample", metadata: { name }, ...rest });
const HOLD = "e2e.kobun.dev/hold";

describe.each(selectedTargets())("sandbox fidelity (3) on %s", (targetName: TargetName) => {
  const need = targetSuite(targetName, { crds: [join(ROOT, "handlers/kobunexample.crd.yaml")], cleanup: [EXAMPLES] });
  /** a request and its JSON answer */
  const api = async (t: Target, method: string, path: string, body?: unknown, type?: string) => {
    const response = await rawRequest(t.client, method, path, body, type);
    return { status: response.status, body: (await response.json()) as any };
  };
  const said = (r: { status: number; body: any }) => [r.status, r.body.message];

  test("DELETE answers a Status for what it removed, the object for what it marked; its options as there", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    const { uid } = (await api(t, "POST", cms(ns), cm("gone"))).body.metadata;
    const success = (details: object) =>
      ({ kind: "Status", apiVersion: "v1", metadata: {}, status: "Success", details });
    expect((await api(t, "DELETE", `${cms(ns)}/gone`)).body)
      .toEqual(success({ name: "gone", kind: "configmaps", uid }));
    const w = (await api(t, "POST", examples(ns), example("w", { spec: {} }))).body.metadata;
    expect((await api(t, "DELETE", `${examples(ns)}/w`)).body)
      .toEqual(success({ name: "w", group: "kobun.dev", kind: "kobunexamples", uid: w.uid }));
    const accounts = `/api/v1/namespaces/${ns}/serviceaccounts`;
    expect((await api(t, "POST", accounts, { metadata: { name: "sa" } })).status).toBe(201);
    expect((await api(t, "DELETE", `${accounts}/sa`)).body.kind).toBe("ServiceAccount"); // ReturnDeletedObject
    // the collector's finalizer as the policy says (the query's, or the body's); a second DELETE swaps it
    expect((await api(t, "POST", cms(ns), cm("held", { finalizers: [HOLD] }))).status).toBe(201);
    const finalizers = async (path: string, body?: object) =>
      (await api(t, "DELETE", path, body)).body.metadata.finalizers;
    expect(await finalizers(`${cms(ns)}/held?propagationPolicy=Foreground`)).toEqual([HOLD, "foregroundDeletion"]);
    expect(await finalizers(`${cms(ns)}/held`, { propagationPolicy: "Orphan" })).toEqual([HOLD, "orphan"]);
    expect(await finalizers(`${cms(ns)}/held`, { propagationPolicy: "Background" })).toEqual([HOLD]);
    const policy = 'Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"';
    const sideways = await api(t, "DELETE", `${cms(ns)}/held?propagationPolicy=Sideways`);
    expect([...said(sideways), sideways.body.details]).toEqual([422, `DeleteOptions.meta.k8s.io "" is invalid: `
      + `propagationPolicy: ${policy}`, { group: "meta.k8s.io", kind: "DeleteOptions",
      causes: [{ reason: "FieldValueNotSupported", message: policy, field: "propagationPolicy" }] }]);
    expect(said(await api(t, "DELETE", `${cms(ns)}/held`, { orphanDependents: true, propagationPolicy: "Foreground" })))
      .toEqual([422, 'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Foreground": '
        + "orphanDependents and deletionPropagation cannot be both set"]);
    expect(said(await api(t, "DELETE", `${cms(ns)}/held?gracePeriodSeconds=soon`)))
      .toEqual([400, 'strconv.ParseInt: parsing "soon": invalid syntax']);
    // a collection's DELETE: the list of what it selected, as it was
    for (const n of ["c1", "c2"]) {
      expect((await api(t, "POST", cms(ns), cm(n, { labels: { l: "1" } }))).status).toBe(201);
    }
    const collection = await api(t, "DELETE", `${cms(ns)}?labelSelector=l%3D1`);
    const listed = collection.body.items.map((o: any) => [o.metadata.name, o.metadata.deletionTimestamp]);
    expect([collection.body.kind, listed])
      .toEqual(["ConfigMapList", [["c1", undefined], ["c2", undefined]]]);
    expect((await api(t, "PATCH", `${cms(ns)}/held`, { metadata: { finalizers: null } }, MERGE)).status).toBe(200);
  }, 60_000);

  test("write options are validated together: fieldManager, fieldValidation, force, dryRun", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    const invalid = (kind: string, ...lines: string[]) =>
      [422, `${kind}.meta.k8s.io "" is invalid: ${lines.length === 1 ? lines[0] : `[${lines.join(", ")}]`}`];
    const long = "m".repeat(129);
    expect(said(await api(t, "POST", `${cms(ns)}?fieldManager=${long}`, cm("a"))))
      .toEqual(invalid("CreateOptions", "fieldManager: Too long: may not be more than 128 bytes"));
    expect((await api(t, "POST", `${cms(ns)}?fieldManager=${long.slice(1)}`, cm("a"))).status).toBe(201);
    expect(said(await api(t, "PUT", `${cms(ns)}/a?fieldManager=a%09b`, cm("a"))))
      .toEqual(invalid("UpdateOptions",
        'fieldManager: Invalid value: "a\\tb": invalid character U+0009 (at position 1)'));
    const validation = 'Unsupported value: "strict": supported values: "", "Ignore", "Strict", "Warn"';
    expect(said(await api(t, "POST", `${cms(ns)}?fieldValidation=strict`, cm("b"))))
      .toEqual(invalid("CreateOptions", `fieldValidation: ${validation}`));
    const query = "force=true&dryRun=Yes&fieldValidation=strict";
    expect(said(await api(t, "PATCH", `${cms(ns)}/a?${query}`, { data: {} }, MERGE)))
      .toEqual(invalid("PatchOptions", "force: Forbidden: may not be specified for non-apply patch",
        'dryRun: Unsupported value: ["Yes"]: supported values: "All"', `fieldValidation: ${validation}`));
    expect(said(await api(t, "PATCH", `${cms(ns)}/a?dryRun=Yes`, cm("a"), APPLY))).toEqual(invalid("PatchOptions",
      "fieldManager: Required value: is required for apply patch", 'dryRun: Unsupported value: ["Yes"]: supported '
      + 'values: "All"'));
  }, 60_000);

  test("server-side apply: conflicts by manager, the configuration's own checks, an object it creates", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    const apply = (manager: string, body: object, name = "a") =>
      api(t, "PATCH", `${cms(ns)}/${name}?fieldManager=${manager}`, body, APPLY);
    expect((await apply("m1", { ...cm("a"), data: { x: "1", y: "2" } })).status).toBe(201);
    expect((await api(t, "PATCH", `${cms(ns)}/a?fieldManager=m3`, { data: { y: "3" } }, MERGE)).status).toBe(200);
    const both = await apply("m2", { ...cm("a"), data: { y: "8", x: "9" } });
    expect(said(both)).toEqual([409, 'Apply failed with 2 conflicts: conflicts with "m1":\n- .data.x\n'
      + 'conflicts with "m3" using v1:\n- .data.y']);
    expect(both.body.details.causes.sort((a: any, b: any) => a.field.localeCompare(b.field))).toEqual([
      { reason: "FieldManagerConflict", message: 'conflict with "m1"', field: ".data.x" },
      { reason: "FieldManagerConflict", message: 'conflict with "m3" using v1', field: ".data.y" }]);
    expect(said(await apply("m2", { ...cm("a"), data: { x: "9" } })))
      .toEqual([409, 'Apply failed with 1 conflict: conflict with "m1": .data.x']);
    const refused = async (body: object) => said(await apply("m2", body));
    expect(await refused({ ...cm("a"), kind: "Secret" })).toEqual([400, "invalid object type: /v1, Kind=Secret"]);
    expect(await refused({ ...cm("a"), apiVersion: "apps/v1" }))
      .toEqual([400, "invalid object type: apps/v1, Kind=ConfigMap"]);
    expect(await refused(cm("a", { namespace: "elsewhere" })))
      .toEqual([400, "the namespace of the provided object does not match the namespace sent on the request"]);
    expect(await refused(cm("a", { managedFields: [{ manager: "m2", operation: "Apply" }] })))
      .toEqual([400, "metadata.managedFields must be nil"]);
    expect(await refused(cm("a", { resourceVersion: "1" }))).toEqual([409, 'Operation cannot be fulfilled on '
      + 'configmaps "a": the object has been modified; please apply your changes to the latest version and try again']);
    const uid = "00000000-0000-0000-0000-000000000000";
    expect(await refused(cm("a", { uid }))).toEqual([422,
      `ConfigMap "a" is invalid: metadata.uid: Invalid value: "${uid}": field is immutable`]);
    // a manager that applies nothing of its own has no entry; a resourceVersion does not stop a create
    const managers = (r: any) => r.body.metadata.managedFields?.map((e: any) => e.manager);
    expect(managers(await apply("m4", cm("a")))).toEqual(["m1", "m3"]);
    const created = await apply("m4", { ...cm("new", { resourceVersion: "5" }), data: { k: "v" } }, "new");
    expect([created.status, managers(created)]).toEqual([201, ["m4"]]);
  }, 60_000);

  test("apply and a status subresource: the main resource owns no status, /status owns no spec", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    const apply = (manager: string, rest: object, sub = "") =>
      api(t, "PATCH", `${examples(ns)}/w${sub}?fieldManager=${manager}`, example("w", rest), APPLY);
    const owned = (r: any) => r.body.metadata.managedFields.map((e: any) => [e.manager, e.subresource, e.fieldsV1]);
    const made = await apply("main", { spec: { replicas: 1 }, status: { phase: "p" } });
    expect([made.status, made.body.status, owned(made)])
      .toEqual([201, undefined, [["main", undefined, { "f:spec": { "f:replicas": {} } }]]]);
    const status = await apply("st", { spec: { replicas: 2 }, status: { phase: "s" } }, "/status");
    expect([status.status, status.body.spec, status.body.status, owned(status)]).toEqual([200, { replicas: 1 },
      { phase: "s" }, [["main", undefined, { "f:spec": { "f:replicas": {} } }],
        ["st", "status", { "f:status": { "f:phase": {} } }]]]);
    const other = await apply("other", { status: { phase: "o" } });
    expect([other.status, other.body.status, owned(other).map((e: any) => e[0])]).toEqual([200, { phase: "s" },
      ["main", "st"]]);
    expect(said(await apply("st2", { status: { phase: "x" } }, "/status")))
      .toEqual([409, 'Apply failed with 1 conflict: conflict with "st" with subresource "status": .status.phase']);
  }, 60_000);

  test("a Deployment's generation counts changes of its spec and of its annotations, not its labels", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    const deployments = `/apis/apps/v1/namespaces/${ns}/deployments`;
    const template = { metadata: { labels: { app: "d" } }, spec: { containers: [{ name: "c", image: "busybox" }] } };
    const spec = { replicas: 1, selector: { matchLabels: { app: "d" } }, template };
    expect((await api(t, "POST", deployments, { metadata: { name: "d" }, spec })).body.metadata.generation).toBe(1);
    const generation = async (patch: object) =>
      (await api(t, "PATCH", `${deployments}/d`, patch, MERGE)).body.metadata.generation;
    expect(await generation({ metadata: { labels: { l: "1" } } })).toBe(1);
    expect(await generation({ metadata: { annotations: { a: "1" } } })).toBe(2);
    expect(await generation({ metadata: { annotations: { a: "1" } } })).toBe(2);
    expect(await generation({ spec: { replicas: 2 } })).toBe(3);
    expect(await generation({ metadata: { annotations: null } })).toBe(4);
  }, 60_000);

  test("an apps/v1 workload's selector: given, not empty, matching the template's labels, immutable; replicas not "
    + "negative; each refusal a 422 in the real server's words and order", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    const mismatch = (labels: string) => `spec.template.metadata.labels: Invalid value: ${labels}: \`selector\` does `
      + "not match template `labels`";
    const template = (labels?: object) =>
      ({ ...(labels ? { metadata: { labels } } : {}), spec: { containers: [{ name: "c", image: "busybox" }] } });
    for (const [kind, word] of [["Deployment", "deployment"], ["ReplicaSet", "deployment"], ["DaemonSet", "daemonset"],
      ["StatefulSet", "statefulset"]] as const) {
      const path = `/apis/apps/v1/namespaces/${ns}/${kind.toLowerCase()}s`;
      const replicas = kind === "DaemonSet" ? {} : { replicas: -2 };
      const create = async (spec: object) => {
        const r = await api(t, "POST", `${path}?dryRun=All`, { apiVersion: "apps/v1", kind, metadata: { name: "w" }, spec });
        return [r.status, r.body.message, r.body.details?.causes?.length];
      };
      const refused = (...causes: string[]) => [422, `${kind}.apps "w" is invalid: ${causes.length === 1 ? causes[0]
        : `[${causes.join(", ")}]`}`, causes.length];
      expect(await create({ selector: { matchLabels: { app: "b" } }, template: template({ app: "a" }) }))
        .toEqual(refused(mismatch('{"app":"a"}')));
      expect(await create({ selector: { matchLabels: { z: "1", a: "2" } }, template: template() }))
        .toEqual(refused(mismatch("null")));
      expect(await create({ selector: {}, template: template({ app: "a" }) }))
        .toEqual(refused(`spec.selector: Invalid value: {}: empty selector is invalid for ${word}`));
      expect(await create({ ...replicas, template: template({ app: "a" }) })).toEqual(refused(
        ...kind === "DaemonSet" ? [] : ["spec.replicas: Invalid value: -2: must be greater than or equal to 0",
          "spec.selector: Required value"],
        mismatch('{"app":"a"}')));
      const expressions = [{ key: "app", operator: "NotIn", values: ["a"] }, { key: "b", operator: "Exists" }];
      expect(await create({ ...replicas, selector: { matchExpressions: expressions }, template: template({ app: "a" }) }))
        .toEqual(refused(...kind === "DaemonSet" ? [] : ["spec.replicas: Invalid value: -2: must be greater than or "
          + "equal to 0"], mismatch('{"app":"a"}')));
      const spec = { selector: { matchLabels: { app: "a" } }, template: template({ app: "a", b: "c" }) };
      const made = await api(t, "POST", path, { apiVersion: "apps/v1", kind, metadata: { name: "w" }, spec });
      expect(made.status).toBe(201);
      const patch = async (p: object) => {
        const r = await api(t, "PATCH", `${path}/w`, p, MERGE);
        return [r.status, r.body.message, r.body.details?.causes?.length];
      };
      const matching = [{ key: "app", operator: "In", values: ["a"] }, { key: "b", operator: "Exists" }];
      expect(await patch({ spec: { selector: { matchLabels: { b: "c" }, matchExpressions: matching } } }))
        .toEqual(refused('spec.selector: Invalid value: {"matchLabels":{"app":"a","b":"c"},"matchExpressions":'
          + '[{"key":"app","operator":"In","values":["a"]},{"key":"b","operator":"Exists"}]}: field is immutable'));
      // a DaemonSet's update rules come before its spec's, the others' after
      const both = [mismatch('{"app":"a","b":"c"}'), 'spec.selector: Invalid value: {"matchLabels":{"app":"z"}}: field is '
        + "immutable"];
      expect(await patch({ spec: { selector: { matchLabels: { app: "z" } } } }))
        .toEqual(refused(...kind === "DaemonSet" ? both.reverse() : both));
      expect(await patch({ spec: { template: { metadata: { labels: { app: "z" } } } } }))
        .toEqual(refused(mismatch('{"app":"z","b":"c"}')));
      expect((await patch({ spec: { template: { metadata: { labels: { d: "e" } } } } }))[0]).toBe(200);
    }
  }, 60_000);
});
