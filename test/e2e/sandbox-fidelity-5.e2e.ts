// More details where the sandbox once differed from kube-apiserver (after sandbox-fidelity.e2e.ts … -4), found
// by running the real kubectl against both and held to the real one on both targets: the defaults and new statuses
// of the workload kinds (`kubectl create job|cronjob`, DaemonSets, StatefulSets, ReplicaSets,
// ReplicationControllers, HorizontalPodAutoscalers), a Service's allocations (headless, node ports), the order
// discovery lists groups and kinds in (`kubectl get all`), and the way from client-side `kubectl apply` to
// `kubectl apply --server-side` (the last-applied annotation).
//
//   cd test/e2e && KOBUN_E2E_TARGET=sandbox bun test ./sandbox-fidelity-5.e2e.ts

import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createNamespace } from "./harness/kube.ts";
import { kubectlTarget } from "./harness/kubectl.ts";
import { ROOT } from "./harness/operator.ts";
import { selectedTargets, type TargetName } from "./harness/target.ts";

const LAST = "kubectl.kubernetes.io/last-applied-configuration";
const TEMPLATE_SPEC = {
  dnsPolicy: "ClusterFirst", schedulerName: "default-scheduler", securityContext: {}, terminationGracePeriodSeconds: 30,
};
const CONTAINER = { terminationMessagePath: "/dev/termination-log", terminationMessagePolicy: "File", resources: {} };

const workloads = (ns: string) => ["DaemonSet", "StatefulSet", "ReplicaSet"].map((kind) => `apiVersion: apps/v1
kind: ${kind}
metadata: {name: w, namespace: ${ns}}
spec:
  selector: {matchLabels: {app: w}}
  template:
    metadata: {labels: {app: w}}
    spec: {containers: [{name: c, image: "nginx:1"}]}
`).concat(`apiVersion: v1
kind: ReplicationController
metadata: {name: w, namespace: ${ns}}
spec:
  template:
    metadata: {labels: {app: w}}
    spec: {containers: [{name: c, image: "nginx:1"}]}
`, `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: w, namespace: ${ns}}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: w}
  maxReplicas: 3
`).join("---\n");

const configMap = (ns: string, labels: string, data: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: m, namespace: ${ns}${labels && `, labels: {${labels}}`}}\ndata: {${data}}\n`;

/** managedFields by manager: operation, fields, and whether the entry has a time */
const owners = (object: any) => Object.fromEntries((object.metadata.managedFields as any[])
  .map((m) => [m.manager, { operation: m.operation, fieldsV1: m.fieldsV1, timed: m.time !== undefined }]));

describe.each(selectedTargets())("sandbox fidelity (5) on %s", (targetName: TargetName) => {
  const need = kubectlTarget(targetName, [join(ROOT, "handlers/kobunexample.crd.yaml")]);
  const getJson = async (ns: string, what: string) => JSON.parse(await need().k.ok(["get", what, "-n", ns, "-o", "json", "--show-managed-fields"]));

  test("create job and cronjob: SetDefaults_Job, the template's pod defaults, the Job's labels are its template's",
    async () => {
      const { t, k } = need();
      const ns = await createNamespace(t.client, "e2e-fidelity");
      await k.ok(["create", "job", "j", "-n", ns, "--image=busybox:1", "--", "true"]);
      await k.ok(["create", "cronjob", "cj", "-n", ns, "--image=busybox:1", "--schedule=*/5 * * * *", "--", "true"]);
      await k.ok(["create", "job", "from", "-n", ns, "--from=cronjob/cj"]);
      const job = await getJson(ns, "job/j");
      const uid = job.metadata.uid;
      expect(job.metadata.labels).toEqual({
        "batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": "j", "controller-uid": uid, "job-name": "j",
      });
      expect(job.spec).toMatchObject({
        backoffLimit: 6, completionMode: "NonIndexed", completions: 1, manualSelector: false, parallelism: 1,
        podReplacementPolicy: "TerminatingOrFailed", suspend: false, template: { spec: { ...TEMPLATE_SPEC, restartPolicy: "Never" } },
      });
      expect(job.spec.template.spec.containers[0]).toMatchObject({ ...CONTAINER, imagePullPolicy: "IfNotPresent" });
      expect(job.status).toEqual({});
      // the labels the server's read defaults are nobody's
      expect(JSON.stringify(job.metadata.managedFields)).not.toContain("f:labels");
      const cronJob = await getJson(ns, "cronjob/cj");
      expect(cronJob.spec.jobTemplate.spec).toEqual({ template: expect.anything() });
      expect(cronJob.spec.jobTemplate.spec.template.spec).toMatchObject({ ...TEMPLATE_SPEC, restartPolicy: "OnFailure" });
      expect(cronJob.status).toEqual({});
      const from = await getJson(ns, "job/from");
      expect(from.metadata.labels["job-name"]).toBe("from");
      expect(from.spec).toMatchObject({ backoffLimit: 6, completions: 1, parallelism: 1, suspend: false });
    }, 60_000);

  test("DaemonSet, StatefulSet, ReplicaSet, ReplicationController, HPA: their defaults and the statuses they start with",
    async () => {
      const { t, k } = need();
      const ns = await createNamespace(t.client, "e2e-fidelity");
      await k.ok(["create", "-f", k.file(`w-${ns}.yaml`, workloads(ns))]);
      const template = { spec: { ...TEMPLATE_SPEC, restartPolicy: "Always", containers: [{ ...CONTAINER, imagePullPolicy: "IfNotPresent" }] } };
      const ds = await getJson(ns, "daemonset/w");
      expect(ds.spec).toMatchObject({
        revisionHistoryLimit: 10, template, updateStrategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 0, maxUnavailable: 1 } },
      });
      expect(ds.status).toEqual({ currentNumberScheduled: 0, desiredNumberScheduled: 0, numberMisscheduled: 0, numberReady: 0 });
      const sts = await getJson(ns, "statefulset/w");
      expect(sts.spec).toMatchObject({
        persistentVolumeClaimRetentionPolicy: { whenDeleted: "Retain", whenScaled: "Retain" }, podManagementPolicy: "OrderedReady",
        replicas: 1, revisionHistoryLimit: 10, template,
        updateStrategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 1, partition: 0 } },
      });
      expect(sts.status).toEqual({ availableReplicas: 0, replicas: 0 });
      const rs = await getJson(ns, "replicaset/w");
      expect([rs.spec.replicas, rs.status]).toEqual([1, { replicas: 0 }]);
      expect(rs.spec.template).toMatchObject(template);
      const rc = await getJson(ns, "replicationcontroller/w");
      expect([rc.metadata.labels, rc.spec.selector, rc.spec.replicas, rc.status]).toEqual([{ app: "w" }, { app: "w" }, 1, { replicas: 0 }]);
      const hpa = await getJson(ns, "hpa/w");
      expect(hpa.spec).toMatchObject({
        minReplicas: 1, metrics: [{ type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 80 } } }],
      });
      expect(hpa.status).toEqual({ currentMetrics: null, desiredReplicas: 0 });
      // the table's columns read them
      const row = (await k.ok(["get", "hpa", "w", "-n", ns, "--no-headers"])).split(/\s+/);
      expect(row.slice(2, 6)).toEqual(["cpu:", "<unknown>/80%", "1", "3"]);
    }, 60_000);

  test("Services: a headless one's clusterIPs and families (both without a selector), node ports, traffic policy",
    async () => {
      const { t, k } = need();
      const ns = await createNamespace(t.client, "e2e-fidelity");
      await k.ok(["create", "service", "clusterip", "headless", "-n", ns, "--tcp=80:8080", "--clusterip=None"]);
      await k.ok(["create", "service", "nodeport", "np", "-n", ns, "--tcp=80:8080"]);
      await k.ok(["create", "-f", k.file(`svc-${ns}.yaml`, [
        `apiVersion: v1\nkind: Service\nmetadata: {name: bare, namespace: ${ns}}\nspec: {clusterIP: None, ports: [{port: 80}]}\n`,
        `apiVersion: v1\nkind: Service\nmetadata: {name: lb, namespace: ${ns}}\nspec: {type: LoadBalancer, ports: [{port: 80}]}\n`,
      ].join("---\n"))]);
      const families = (s: any) => [s.spec.clusterIPs, s.spec.ipFamilyPolicy, s.spec.ipFamilies];
      expect(families(await getJson(ns, "svc/headless"))).toEqual([["None"], "SingleStack", ["IPv4"]]);
      expect(families(await getJson(ns, "svc/bare"))).toEqual([["None"], "RequireDualStack", ["IPv4", "IPv6"]]);
      for (const name of ["np", "lb"]) {
        const svc = await getJson(ns, `svc/${name}`);
        expect(svc.spec.externalTrafficPolicy).toBe("Cluster");
        expect(svc.spec.ports[0].nodePort).toBeGreaterThanOrEqual(30000);
        expect(svc.spec.ports[0].nodePort).toBeLessThanOrEqual(32767);
        expect(JSON.stringify(svc.metadata.managedFields)).toContain("f:externalTrafficPolicy");
        expect(JSON.stringify(svc.metadata.managedFields)).not.toContain("f:nodePort");
      }
      expect((await getJson(ns, "svc/lb")).spec.allocateLoadBalancerNodePorts).toBe(true);
      const table = await k.ok(["get", "svc", "-n", ns, "--no-headers"]);
      expect(table).toMatch(/^headless\s+ClusterIP\s+None\s/m);
      expect(table).toMatch(/^np\s+NodePort\s+\S+\s+<none>\s+80:3\d{4}\/TCP\s/m);
    }, 60_000);

  test("get all: the kinds in discovery's order (groups by priority, kinds by name)", async () => {
    const { t, k } = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    await k.ok(["create", "-f", k.file(`all-${ns}.yaml`, workloads(ns))]);
    await k.ok(["create", "deployment", "w", "-n", ns, "--image=nginx:1"]);
    await k.ok(["create", "job", "w", "-n", ns, "--image=busybox:1"]);
    await k.ok(["create", "cronjob", "w", "-n", ns, "--image=busybox:1", "--schedule=0 * * * *"]);
    const kinds = (await k.ok(["get", "all", "-n", ns, "-o", "name"])).trim().split("\n").map((l) => l.split("/")[0]);
    expect(kinds).toEqual([
      "replicationcontroller", "daemonset.apps", "deployment.apps", "replicaset.apps", "statefulset.apps",
      "horizontalpodautoscaler.autoscaling", "cronjob.batch", "job.batch",
    ]);
    const groups = JSON.parse(await k.ok(["get", "--raw", "/apis"])).groups.map((g: any) => g.name);
    const order = ["apps", "events.k8s.io", "authorization.k8s.io", "autoscaling", "batch", "rbac.authorization.k8s.io"];
    expect(groups.filter((g: string) => order.includes(g))).toEqual(order);
    const apps = JSON.parse(await k.ok(["get", "--raw", "/apis/apps/v1"])).resources.map((r: any) => r.name);
    expect(apps.filter((r: string) => r !== "controllerrevisions")).toEqual([
      "daemonsets", "daemonsets/status", "deployments", "deployments/scale", "deployments/status", "replicasets",
      "replicasets/scale", "replicasets/status", "statefulsets", "statefulsets/scale", "statefulsets/status",
    ]);
  }, 60_000);

  test("apply, then apply --server-side: kubectl takes what was last applied; the annotation follows its applies",
    async () => {
      const { t, k } = need();
      const ns = await createNamespace(t.client, "e2e-fidelity");
      const first = k.file(`first-${ns}.yaml`, configMap(ns, 'a: "1", b: "2"', "k1: v1, k2: v2"));
      const second = k.file(`second-${ns}.yaml`, configMap(ns, 'a: "1"', "k1: v1x"));
      await k.ok(["apply", "-f", first]);
      await k.ok(["apply", "-f", second]);
      // k1, k2 and b are kubectl-client-side-apply's; their values are still the last applied ones
      expect(await k.ok(["apply", "--server-side", "-f", first])).toBe("configmap/m serverside-applied\n");
      let cm = await getJson(ns, "cm/m");
      expect(cm.data).toEqual({ k1: "v1", k2: "v2" });
      expect(cm.metadata.annotations[LAST]).toBe(
        `{"apiVersion":"v1","data":{"k1":"v1","k2":"v2"},"kind":"ConfigMap","metadata":{"labels":{"a":"1","b":"2"},"name":"m","namespace":"${ns}"}}\n`,
      );
      expect(owners(cm)).toEqual({
        kubectl: { operation: "Apply", timed: true, fieldsV1: { "f:data": { "f:k1": {}, "f:k2": {} }, "f:metadata": { "f:labels": { "f:a": {}, "f:b": {} } } } },
        "kubectl-last-applied": { operation: "Apply", timed: false, fieldsV1: { "f:metadata": { "f:annotations": { [`f:${LAST}`]: {} } } } },
      });
      // a value changed since by another manager is a conflict
      await k.ok(["patch", "cm", "m", "-n", ns, "--type=merge", "-p", '{"data":{"k1":"other"}}']);
      const refused = await k.run(["apply", "--server-side", "-f", second]);
      expect(refused.stderr.split("\n")[0]).toBe('error: Apply failed with 1 conflict: conflict with "kubectl-patch" using v1: .data.k1');
      await k.ok(["apply", "--server-side", "--force-conflicts", "-f", second]);
      cm = await getJson(ns, "cm/m");
      expect([cm.data, cm.metadata.labels]).toEqual([{ k1: "v1x" }, { a: "1" }]);
      expect(JSON.parse(cm.metadata.annotations[LAST]).data).toEqual({ k1: "v1x" });
    }, 60_000);

  test("a JSON patch's replace of a key an object lacks adds it (json-patch v4 reads it as null)", async () => {
    const { t, k } = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    await k.ok(["create", "configmap", "r", "-n", ns, "--from-literal=a=b"]);
    await k.ok(["patch", "cm", "r", "-n", ns, "--type=json", "-p", '[{"op":"replace","path":"/data/zz","value":"x"}]']);
    expect((await getJson(ns, "cm/r")).data).toEqual({ a: "b", zz: "x" });
  }, 60_000);

  test("apply --server-side of what changes nothing: a new manager's entry has no time", async () => {
    const { t, k } = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    await k.ok(["create", "configmap", "m", "-n", ns, "--from-literal=a=1"]);
    await k.ok(["apply", "--server-side", "--field-manager=same", "-f", k.file(`same-${ns}.yaml`, configMap(ns, "", "a: '1'"))]);
    const cm = await getJson(ns, "cm/m");
    expect(owners(cm).same).toEqual({ operation: "Apply", timed: false, fieldsV1: { "f:data": { "f:a": {} } } });
  }, 60_000);

  test("what Go's omitempty drops is not stored: empty maps and lists and nulls, in metadata, data, a pod template, "
    + "a custom resource's metadata; by a create and by patches", async () => {
    const { t, k } = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    const empties = "annotations: {}, labels: {a: null}, finalizers: [], ownerReferences: [], generateName: ''";
    const create = async (yaml: string) => JSON.parse(await k.ok(["create", "--validate=false", "-o", "json", "-f",
      k.file(`empties-${ns}.yaml`, yaml)]));
    const cm = await create(`apiVersion: v1\nkind: ConfigMap\nmetadata: {name: e, namespace: ${ns}, ${empties}}
data: {}\nbinaryData: null\n`);
    const example = await create(`apiVersion: kobun.dev/v1\nkind: KobunExample
metadata: {name: e, namespace: ${ns}, ${empties}}\nspec: {}\n`);
    const deployment = await create(`apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: e, namespace: ${ns}}
spec:
  selector: {matchLabels: {app: e}, matchExpressions: []}
  template:
    metadata: {labels: {app: e}, annotations: {}}
    spec:
      nodeSelector: {}
      volumes: []
      containers: [{name: c, image: "nginx:1", env: [], args: null, resources: {limits: {}}}]
`);
    for (const o of [cm, example]) expect(Object.keys(o.metadata).sort()).toEqual(["creationTimestamp", "labels", "name",
      "namespace", "resourceVersion", "uid", ...(o === example ? ["generation"] : [])].sort());
    expect([cm.metadata.labels, example.metadata.labels, cm.data, cm.binaryData]).toEqual([{ a: "" }, { a: "" }, undefined,
      undefined]);
    expect(example.spec).toEqual({}); // a custom resource's own fields are kept as sent
    const template = deployment.spec.template;
    expect([deployment.spec.selector, template.metadata]).toEqual([{ matchLabels: { app: "e" } }, { labels: { app: "e" } }]);
    expect([template.spec.nodeSelector, template.spec.volumes]).toEqual([undefined, undefined]);
    const { name, image, env, args, resources } = template.spec.containers[0];
    expect({ name, image, env, args, resources }).toEqual({ name: "c", image: "nginx:1", env: undefined, args: undefined,
      resources: {} });
    const merged = JSON.parse(await k.ok(["patch", "cm", "e", "-n", ns, "--type=merge", "-o", "json",
      "-p", '{"metadata":{"annotations":{}},"data":{}}']));
    const patched = JSON.parse(await k.ok(["patch", "cm", "e", "-n", ns, "--type=json", "-o", "json",
      "-p", '[{"op":"add","path":"/metadata/finalizers","value":[]},{"op":"add","path":"/binaryData","value":{}}]']));
    for (const o of [merged, patched]) {
      expect([o.metadata.annotations, o.metadata.finalizers, o.data, o.binaryData]).toEqual([undefined, undefined,
        undefined, undefined]);
    }
  }, 60_000);

  test("kubectl diff of an object made by kubectl create: only the changed value (its patch's `annotations: {}` is "
    + "not stored)", async () => {
    const { t, k } = need();
    const ns = await createNamespace(t.client, "e2e-fidelity");
    await k.ok(["create", "configmap", "d", "-n", ns, "--from-literal=a=1"]);
    const r = await k.run(["diff", "-f", k.file(`diff-${ns}.yaml`, configMap(ns, "", "a: '2'").replace("name: m", "name: d"))]);
    expect(r.code).toBe(1); // kubectl diff's "there are differences"
    const changed = r.stdout.split("\n").filter((l) => /^[-+] /.test(l));
    expect(changed).toEqual(['-  a: "1"', '+  a: "2"']);
  }, 60_000);
});
