// A Pod as kube-apiserver v1.37.2 fills it in (issue 18), compared on both targets as
// `kubectl create -f -o yaml` and `kubectl get -o yaml --show-managed-fields` print it: the
// PodSpec, container, probe, handler, volume and field-ref defaults, a Pod's own (service links,
// requests from limits), quantities in canonical form, what the default admission plugins add
// (priority, preemption policy, not-ready/unreachable tolerations: owned by nobody), and the
// status a new Pod starts with (Pending, its QoS class). The expected texts are the real server's.
//
//   cd test/e2e && KOBUN_E2E_TARGET=sandbox bun test ./kubectl-pods.e2e.ts

import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createNamespace } from "./harness/kube.ts";
import { kubectlTarget, normalise } from "./harness/kubectl.ts";
import { selectedTargets, type TargetName } from "./harness/target.ts";

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

const expected = (file: string) => Bun.file(join(import.meta.dir, "expected", file)).text();

describe.each(selectedTargets())("kubectl and Pods against %s", (targetName: TargetName) => {
  const need = kubectlTarget(targetName, []);

  test("create -f pod.yaml -o yaml: the server's defaults, admission and initial status", async () => {
    const { t, k } = need();
    const ns = await createNamespace(t.client);
    const created = await k.ok(["create", "-f", k.file(`pod-${ns}.yaml`, POD(ns)), "-o", "yaml"]);
    expect(normalise(created, { respace: false }).replaceAll(ns, "<ns>")).toBe(await expected("kubectl-create-pod.yaml"));
    // the writer owns the defaults, nobody what admission added or the status
    const got = await k.ok(["get", "pod", "p", "-n", ns, "-o", "yaml", "--show-managed-fields"]);
    const managed = /\n  managedFields:\n[\s\S]*?\n  name: p\n/.exec(normalise(got, { respace: false }))?.[0];
    expect(managed).toBe(await expected("kubectl-pod-managed-fields.yaml"));
  }, 60_000);
});
