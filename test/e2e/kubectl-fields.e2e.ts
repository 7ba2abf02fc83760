// kubectl and field ownership / defaulting (issue 18): what `kubectl create`, `label`,
// `annotate`, `patch` and client-side `apply` leave in managedFields, the conflict a later
// `apply --server-side` meets, and the defaults the server fills into a created Deployment,
// Service and Pod, compared as `kubectl get -o yaml --show-managed-fields` prints them. One
// expected text per test, the same on both targets: the real API server is the judge of the sandbox.
//
// A Pod: the PodSpec, container, probe, handler, volume and field-ref defaults, a Pod's own
// (service links, requests from limits), quantities in canonical form, what the default admission
// plugins add (priority, preemption policy, not-ready/unreachable tolerations: owned by nobody)
// and the status it starts with (Pending, its QoS class).
//
// Service ports: server-side apply keys them by port AND protocol (the schema's list-map keys, a
// left-out protocol taking its default TCP), so 53/TCP and 53/UDP are two ports; strategic merge
// patch (client-side apply) keys them by port alone, so adding 53/UDP to a file that had 53/TCP
// leaves one port, as on the real server. Finalizers are a set and the selector an atomic map to
// server-side apply.
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

const POD = (ns: string) => `apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ${ns}}
spec:
  serviceAccount: builder
  tolerations:
  - {key: node.kubernetes.io/not-ready, operator: Exists}
  initContainers:
  - {name: init, image: "busybox:latest", command: ["true"]}
  containers:
  - name: web
    image: nginx:1.27
    ports: [{containerPort: 80}, {containerPort: 53, protocol: UDP}]
    env:
    - {name: POD, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
    resources:
      requests: {cpu: "0.5"}
      limits: {cpu: "1", memory: 1.5Gi}
    livenessProbe: {httpGet: {port: 80}}
    readinessProbe: {exec: {command: ["true"]}, periodSeconds: 5}
    lifecycle: {preStop: {httpGet: {port: 81, path: /stop}}}
  - name: tools
    image: registry.local:5000/tools
    volumeMounts: [{name: scratch, mountPath: /s}]
  volumes:
  - name: scratch
  - {name: sec, secret: {secretName: s}}
  - {name: cfg, configMap: {name: c}}
  - {name: host, hostPath: {path: /tmp}}
  - name: proj
    projected:
      sources:
      - serviceAccountToken: {path: token}
      - downwardAPI: {items: [{path: name, fieldRef: {fieldPath: metadata.name}}]}
`;


const service = (ns: string, name: string, ports: string[], extra = "") =>
  `apiVersion: v1\nkind: Service\nmetadata: {name: ${name}, namespace: ${ns}${extra}}\nspec:\n  selector: {app: dns}\n  ports:\n${ports.map((p) => `  - ${p}\n`).join("")}`;
const TCP = "{name: dns-tcp, port: 53, targetPort: 53}";
const UDP = "{name: dns-udp, port: 53, protocol: UDP, targetPort: 53}";
const summary = (json: string) => {
  const svc = JSON.parse(json);
  return { ports: svc.spec.ports.map((p: any) => `${p.name} ${p.port}/${p.protocol}->${p.targetPort}`), owned: svc.metadata.managedFields.map((m: any) => [m.manager, m.fieldsV1]) };
};
const item = (protocol: boolean) => ({ ".": {}, "f:name": {}, "f:port": {}, ...(protocol ? { "f:protocol": {} } : {}), "f:targetPort": {} });

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

  test("create -f pod.yaml -o yaml: the server's defaults, admission and initial status", async () => {
    const { t, k } = need();
    const ns = await createNamespace(t.client);
    const created = await k.ok(["create", "-f", k.file(`pod-${ns}.yaml`, POD(ns)), "-o", "yaml"]);
    expect(normalise(created, { respace: false }).replaceAll(ns, "<ns>")).toBe(await Bun.file(join(import.meta.dir, "expected/kubectl-create-pod.yaml")).text());
    // the writer owns the defaults, nobody what admission added or the status
    const got = await k.ok(["get", "pod", "p", "-n", ns, "-o", "yaml", "--show-managed-fields"]);
    const managed = /\n  managedFields:\n[\s\S]*?\n  name: p\n/.exec(normalise(got, { respace: false }))?.[0];
    expect(managed).toBe(await Bun.file(join(import.meta.dir, "expected/kubectl-pod-managed-fields.yaml")).text());
  }, 60_000);

  test("apply --server-side: 53/TCP and 53/UDP are two ports, keyed by port and protocol; finalizers a set, the selector atomic", async () => {
    const { t, k } = need();
    const ns = await createNamespace(t.client);
    await k.ok(["apply", "--server-side", "-f", k.file(`ssa-${ns}.yaml`, service(ns, "dns", [TCP, UDP], ", finalizers: [e2e.kobun.dev/keep]"))]);
    const get = async () => summary(await k.ok(["get", "svc", "dns", "-n", ns, "-o", "json", "--show-managed-fields"]));
    expect(await get()).toEqual({
      ports: ["dns-tcp 53/TCP->53", "dns-udp 53/UDP->53"],
      owned: [["kubectl", {
        "f:metadata": { "f:finalizers": { 'v:"e2e.kobun.dev/keep"': {} } },
        "f:spec": { "f:ports": { 'k:{"port":53,"protocol":"TCP"}': item(false), 'k:{"port":53,"protocol":"UDP"}': item(true) }, "f:selector": {} },
      }]],
    });
    // applying only 53/UDP again drops 53/TCP: this manager owned it and no longer applies it
    await k.ok(["apply", "--server-side", "-f", k.file(`ssa2-${ns}.yaml`, service(ns, "dns", ["{name: dns-udp, port: 53, protocol: UDP, targetPort: 5353}"]))]);
    expect(await get()).toEqual({ ports: ["dns-udp 53/UDP->5353"], owned: [["kubectl", { "f:spec": { "f:ports": { 'k:{"port":53,"protocol":"UDP"}': item(true) }, "f:selector": {} } }]] });
  }, 60_000);

  test("client-side apply: adding 53/UDP to a file with 53/TCP leaves one port, a mix of both (strategic merge patch keys ports by port)", async () => {
    const { t, k } = need();
    const ns = await createNamespace(t.client);
    expect(await k.ok(["apply", "-f", k.file(`csa-${ns}.yaml`, service(ns, "dnsc", [TCP]))])).toBe("service/dnsc created\n");
    expect(await k.ok(["apply", "-f", k.file(`csa2-${ns}.yaml`, service(ns, "dnsc", [TCP, UDP]))])).toBe("service/dnsc configured\n");
    const svc = JSON.parse(await k.ok(["get", "svc", "dnsc", "-n", ns, "-o", "json"]));
    // both patch elements merge into the one live port of key 53: its name from the last, the protocol from the first
    expect(svc.spec.ports).toEqual([{ name: "dns-tcp", port: 53, protocol: "UDP", targetPort: 53 }]);
  }, 60_000);

  test("apply --server-side of a custom resource by two managers: its CRD's list map keyed by name and protocol, a set, an atomic map; metadata's finalizers a set", async () => {
    const { t, k } = need();
    const ns = await createNamespace(t.client);
    await k.ok(["apply", "-f", k.file(`gate-crd-${ns}.yaml`, GATE_CRD)]);
    await k.ok(["wait", "--for=condition=Established", "--timeout=30s", "crd/gates.e2e.kobun.dev"]);
    const gate = (spec: string, finalizer: string) => k.file(`gate-${finalizer}-${ns}.yaml`,
      `apiVersion: e2e.kobun.dev/v1\nkind: Gate\nmetadata: {name: g, namespace: ${ns}, finalizers: [e2e.kobun.dev/${finalizer}]}\nspec: ${spec}\n`);
    await k.ok(["apply", "--server-side", "--field-manager=alice", "-f", gate("{ports: [{name: http, protocol: TCP, port: 80}], tags: [a], selector: {app: x}}", "a")]);
    await k.ok(["apply", "--server-side", "--field-manager=bob", "-f", gate("{ports: [{name: dns, protocol: UDP, port: 53}], tags: [b]}", "b")]);
    const got = JSON.parse(await k.ok(["get", "gates.e2e.kobun.dev", "g", "-n", ns, "-o", "json", "--show-managed-fields"]));
    expect({ finalizers: got.metadata.finalizers, spec: got.spec }).toEqual({
      finalizers: ["e2e.kobun.dev/a", "e2e.kobun.dev/b"],
      spec: { ports: [{ name: "http", protocol: "TCP", port: 80 }, { name: "dns", protocol: "UDP", port: 53 }], tags: ["a", "b"], selector: { app: "x" } },
    });
    const port = { ".": {}, "f:name": {}, "f:port": {}, "f:protocol": {} };
    expect(owners(JSON.stringify(got))).toEqual([
      { manager: "alice", operation: "Apply", apiVersion: "e2e.kobun.dev/v1", fieldsV1: {
        "f:metadata": { "f:finalizers": { 'v:"e2e.kobun.dev/a"': {} } },
        "f:spec": { "f:ports": { 'k:{"name":"http","protocol":"TCP"}': port }, "f:selector": {}, "f:tags": { 'v:"a"': {} } } } },
      { manager: "bob", operation: "Apply", apiVersion: "e2e.kobun.dev/v1", fieldsV1: {
        "f:metadata": { "f:finalizers": { 'v:"e2e.kobun.dev/b"': {} } },
        "f:spec": { "f:ports": { 'k:{"name":"dns","protocol":"UDP"}': port }, "f:tags": { 'v:"b"': {} } } } },
    ]);
    // the atomic selector is alice's as a whole: bob changing one key of it conflicts on .spec.selector
    const clash = await k.run(["apply", "--server-side", "--field-manager=bob", "-f", gate("{ports: [{name: dns, protocol: UDP, port: 53}], tags: [b], selector: {app: x, tier: web}}", "b")]);
    expect(clash.stderr.split("\n")[0]).toBe('error: Apply failed with 1 conflict: conflict with "alice": .spec.selector');
    await k.ok(["patch", "gates.e2e.kobun.dev", "g", "-n", ns, "--type=merge", "-p", '{"metadata":{"finalizers":null}}']);
  }, 60_000);
});

/** a CRD declaring a list map (keys name and protocol), a set and an atomic map, as structured-merge-diff reads them */
const GATE_CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gates.e2e.kobun.dev}
spec:
  group: e2e.kobun.dev
  scope: Namespaced
  names: {kind: Gate, plural: gates, singular: gate}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name, protocol]
                items:
                  type: object
                  required: [name, protocol]
                  properties:
                    name: {type: string}
                    protocol: {type: string}
                    port: {type: integer}
              tags: {type: array, x-kubernetes-list-type: set, items: {type: string}}
              selector: {type: object, x-kubernetes-map-type: atomic, additionalProperties: {type: string}}
`;
