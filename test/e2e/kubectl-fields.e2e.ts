// kubectl and field ownership / defaulting (issue 18): what `kubectl create`, `label`,
// `annotate`, `patch` and client-side `apply` leave in managedFields, the conflict a later
// `apply --server-side` meets, and the defaults the server fills into a created Deployment and
// Service, compared as `kubectl get -o yaml --show-managed-fields` prints them. One expected
// text per test, the same on both targets: the real API server is the judge of the sandbox.
//
//   cd test/e2e && KOBUN_E2E_TARGET=sandbox bun test ./kubectl-fields.e2e.ts

import { describe, expect, test } from "bun:test";
import { createNamespace } from "./harness/kube.ts";
import { kubectlTarget, normalise } from "./harness/kubectl.ts";
import { ROOT } from "./harness/operator.ts";
import { selectedTargets, type TargetName } from "./harness/target.ts";
import { chmodSync } from "node:fs";
import { join } from "node:path";

/** managedFields without their times, ordered by manager (entries of one second are ordered by name, of two by time) */
const owners = (json: string) => (JSON.parse(json).metadata.managedFields as any[])
  .map((m) => ({ manager: m.manager, operation: m.operation, apiVersion: m.apiVersion, ...(m.subresource ? { subresource: m.subresource } : {}), fieldsV1: m.fieldsV1 }))
  .sort((a, b) => (a.manager < b.manager ? -1 : 1));

describe.each(selectedTargets())("kubectl and managedFields against %s", (targetName: TargetName) => {
  const need = kubectlTarget(targetName, [join(ROOT, "handlers/kobunexample.crd.yaml")]);

  test("create, then apply --server-side of a created field: a conflict with kubectl-create", async () => {
    const { t, k } = need();
    const ns = await createNamespace(t.client);
    await k.ok(["create", "configmap", "c", "-n", ns, "--from-literal=a=1"]);
    const file = k.file(`ssa-${ns}.yaml`, `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: ${ns}\ndata:\n  a: "9"\n`);
    const refused = await k.run(["apply", "--server-side", "-f", file]);
    expect(refused.code).toBe(1);
    expect(refused.stderr.split("\n")[0]).toBe('error: Apply failed with 1 conflict: conflict with "kubectl-create" using v1: .data.a');
    expect(await k.ok(["apply", "--server-side", "--force-conflicts", "-f", file])).toBe("configmap/c serverside-applied\n");
    expect(owners(await k.ok(["get", "cm", "c", "-n", ns, "-o", "json", "--show-managed-fields"]))).toEqual([
      { manager: "kubectl", operation: "Apply", apiVersion: "v1", fieldsV1: { "f:data": { "f:a": {} } } },
      { manager: "kubectl-create", operation: "Update", apiVersion: "v1", fieldsV1: { "f:data": {} } },
    ]);
  }, 60_000);

  test("create, label, annotate, patch and client-side apply: each command's manager owns what it wrote", async () => {
    const { t, k } = need();
    const ns = await createNamespace(t.client);
    await k.ok(["create", "configmap", "c", "-n", ns, "--from-literal=a=1"]);
    await k.ok(["label", "cm", "c", "-n", ns, "x=y"]);
    await k.ok(["annotate", "cm", "c", "-n", ns, "n=m"]);
    await k.ok(["patch", "cm", "c", "-n", ns, "--type=merge", "-p", '{"data":{"b":"2"}}']);
    await k.ok(["apply", "-f", k.file(`csa-${ns}.yaml`, `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: d\n  namespace: ${ns}\n  labels: {q: r}\ndata:\n  a: "1"\n`)]);
    expect(owners(await k.ok(["get", "cm", "c", "-n", ns, "-o", "json", "--show-managed-fields"]))).toEqual([
      { manager: "kubectl-annotate", operation: "Update", apiVersion: "v1", fieldsV1: { "f:metadata": { "f:annotations": { ".": {}, "f:n": {} } } } },
      { manager: "kubectl-create", operation: "Update", apiVersion: "v1", fieldsV1: { "f:data": { ".": {}, "f:a": {} } } },
      { manager: "kubectl-label", operation: "Update", apiVersion: "v1", fieldsV1: { "f:metadata": { "f:labels": { ".": {}, "f:x": {} } } } },
      { manager: "kubectl-patch", operation: "Update", apiVersion: "v1", fieldsV1: { "f:data": { "f:b": {} } } },
    ]);
    expect(owners(await k.ok(["get", "cm", "d", "-n", ns, "-o", "json", "--show-managed-fields"]))).toEqual([{
      manager: "kubectl-client-side-apply", operation: "Update", apiVersion: "v1", fieldsV1: {
        "f:data": { ".": {}, "f:a": {} },
        "f:metadata": { "f:annotations": { ".": {}, "f:kubectl.kubernetes.io/last-applied-configuration": {} }, "f:labels": { ".": {}, "f:q": {} } },
      },
    }]);
  }, 60_000);

  test("create -f of a custom resource: kubectl-create owns its spec", async () => {
    const { t, k } = need();
    const ns = await createNamespace(t.client);
    await k.ok(["create", "-f", k.file(`cr-${ns}.yaml`, `apiVersion: kobun.dev/v1\nkind: KobunExample\nmetadata:\n  name: e\n  namespace: ${ns}\n  labels: {q: r}\nspec:\n  size: 2\n`)]);
    expect(owners(await k.ok(["get", "kex", "e", "-n", ns, "-o", "json", "--show-managed-fields"]))).toEqual([{
      manager: "kubectl-create", operation: "Update", apiVersion: "kobun.dev/v1",
      fieldsV1: { "f:metadata": { "f:labels": { ".": {}, "f:q": {} } }, "f:spec": { ".": {}, "f:size": {} } },
    }]);
  }, 60_000);

  test("create deployment: the server's defaults, owned by kubectl-create (get -o yaml --show-managed-fields)", async () => {
    const { t, k } = need();
    const ns = await createNamespace(t.client);
    await k.ok(["create", "deployment", "d", "-n", ns, "--image=nginx:1"]);
    const yaml = normalise(await k.ok(["get", "deploy", "d", "-n", ns, "-o", "yaml", "--show-managed-fields"]), { respace: false }).replaceAll(ns, "<ns>");
    expect(yaml).toBe(await Bun.file(join(import.meta.dir, "expected/kubectl-create-deployment.yaml")).text());
  }, 60_000);

  test("create service clusterip: the server's defaults and an allocated cluster IP nobody owns", async () => {
    const { t, k } = need();
    const ns = await createNamespace(t.client);
    await k.ok(["create", "service", "clusterip", "s", "-n", ns, "--tcp=80:8080"]);
    const yaml = normalise(await k.ok(["get", "svc", "s", "-n", ns, "-o", "yaml", "--show-managed-fields"]), { respace: false }).replaceAll(ns, "<ns>")
      .replace(/\b10\.0\.0\.\d+\b/g, "<cluster-ip>");
    expect(yaml).toBe(await Bun.file(join(import.meta.dir, "expected/kubectl-create-service.yaml")).text());
  }, 60_000);

  test("scale: kubectl owns spec.replicas through the scale subresource (an entry without a time)", async () => {
    const { t, k } = need();
    const ns = await createNamespace(t.client);
    await k.ok(["create", "deployment", "d", "-n", ns, "--image=nginx:1"]);
    await k.ok(["scale", "deploy", "d", "-n", ns, "--replicas=2"]);
    const managed = JSON.parse(await k.ok(["get", "deploy", "d", "-n", ns, "-o", "json", "--show-managed-fields"])).metadata.managedFields;
    expect(managed[0]).toEqual({ apiVersion: "apps/v1", fieldsType: "FieldsV1", fieldsV1: { "f:spec": { "f:replicas": {} } }, manager: "kubectl", operation: "Update", subresource: "scale" });
    expect(managed[1].manager).toBe("kubectl-create");
    expect(managed[1].fieldsV1["f:spec"]["f:replicas"]).toBeUndefined();
  }, 60_000);

  test("edit: the editor's change is patched in and owned by kubectl-edit", async () => {
    const { t, k } = need();
    const ns = await createNamespace(t.client);
    await k.ok(["create", "configmap", "c", "-n", ns, "--from-literal=a=1"]);
    const editor = k.file(`editor-${ns}.sh`, `#!/bin/sh\nsed -i 's/a: "1"/a: "2"/' "$1"\n`);
    chmodSync(editor, 0o755);
    expect(await k.ok(["edit", "cm", "c", "-n", ns], { env: { KUBE_EDITOR: editor } })).toBe("configmap/c edited\n");
    expect(await k.ok(["get", "cm", "c", "-n", ns, "-o", "jsonpath={.data.a}"])).toBe("2");
    expect(owners(await k.ok(["get", "cm", "c", "-n", ns, "-o", "json", "--show-managed-fields"]))).toEqual([
      { manager: "kubectl-create", operation: "Update", apiVersion: "v1", fieldsV1: { "f:data": {} } },
      { manager: "kubectl-edit", operation: "Update", apiVersion: "v1", fieldsV1: { "f:data": { "f:a": {} } } },
    ]);
  }, 60_000);

  test("describe a created deployment: its defaults as the real server's describe prints them", async () => {
    const { t, k } = need();
    const ns = await createNamespace(t.client);
    await k.ok(["create", "deployment", "d", "-n", ns, "--image=nginx:1"]);
    const text = normalise(await k.ok(["describe", "deployment", "d", "-n", ns])).replaceAll(ns, "<ns>").replace(/^CreationTimestamp:.*$/m, "CreationTimestamp:  <when>");
    expect(text).toBe(await Bun.file(join(import.meta.dir, "expected/kubectl-describe-deployment.txt")).text());
  }, 60_000);
});
