// Must typecheck: ctx.api takes typed tokens and answers with their types; kobun's exported
// built-in types (Job, ConfigMap, ...) are the tokens' types, so the kit's apply and until agree
// with them (issue 35, item 5: they were two types for one kind, and a 12-line tsc error).
import {
  resource, run, Logger, memorySink, type Api, type ConfigMap, type HorizontalPodAutoscaler, type Job,
  type KubeObject, type Namespace, type NetworkPolicy, type PodDisruptionBudget, type ReplicaSet, type Resource,
  type MemorySink,
} from "kobun";
import { startOperator, type TestOperator } from "kobun/testing";
import { assertType, Examples, type Equal, type KobunExample } from "./example.ts";

export async function apiTokens(api: Api, resolved: Resource): Promise<void> {
  const cm = await api.get(resource.configmaps, "x");
  assertType<Equal<typeof cm, ConfigMap>>();
  const jobs = await api.list(resource.jobs, { labelSelector: "app=x" });
  assertType<Equal<typeof jobs, Job[]>>();
  const ns = await api.get(resource.namespaces, "default");
  assertType<Equal<typeof ns, Namespace>>();
  const example = await api.patch(Examples, "e", { spec: { size: 2 } });
  assertType<Equal<typeof example, KobunExample>>();
  const bySelector = await api.get("batch/v1/jobs", "j");
  assertType<Equal<typeof bySelector, Job>>();
  const untyped = await api.get(resolved, "x");
  assertType<Equal<typeof untyped, KubeObject>>();
  for await (const event of api.watch(resource.configmaps)) {
    if ("object" in event) assertType<Equal<typeof event.object, ConfigMap>>();
  }
  await api.delete(resource.namespaces, "gone");
  // The kinds the sandbox serves beside the first ones (a Database's PodDisruptionBudget): typed as those are.
  const pdb = await api.get(resource.poddisruptionbudgets, "db");
  assertType<Equal<typeof pdb, PodDisruptionBudget>>();
  const bySelector2 = await api.get("policy/v1/poddisruptionbudgets", "db");
  assertType<Equal<typeof bySelector2, PodDisruptionBudget>>();
  assertType<Equal<Awaited<ReturnType<typeof api.list<typeof resource.networkpolicies>>>, NetworkPolicy[]>>();
  assertType<Equal<Awaited<ReturnType<typeof api.get<typeof resource.replicasets>>>, ReplicaSet>>();
  const hpa = await api.get("horizontalpodautoscalers.autoscaling", "web");
  assertType<Equal<typeof hpa, HorizontalPodAutoscaler>>();
}

export async function kitAgreesWithExportedTypes(kit: TestOperator): Promise<Job> {
  const job: Job = {
    apiVersion: "batch/v1", kind: "Job", metadata: { name: "j" },
    spec: { template: { spec: { containers: [{ name: "c", image: "busybox" }], restartPolicy: "Never" } } },
  };
  await kit.apply(resource.jobs, job);
  await kit.patchStatus(resource.jobs, "j", { succeeded: 1 });
  await kit.apply(resource.jobs, { metadata: { name: "j" }, status: { active: 1 } }, { subresource: "status" });
  // A server-side apply names only the fields it sets (client-go's apply configurations): a hand
  // edit of one field of a Deployment, without its required selector and template.
  await kit.apply(resource.deployments, { metadata: { name: "web" }, spec: { replicas: 5 } });
  await kit.apply(resource.deployments, { metadata: { name: "web" }, spec: { template: { spec: { containers: [{ name: "c", image: "x:2" }] } } } });
  const held = await kit.consistently(resource.jobs, "j", (j) => !j?.status?.failed, { for: 100 });
  assertType<Equal<typeof held, Job | undefined>>();
  const events = await kit.events(job, { until: (list) => list.some((e) => e.reason === "Created") });
  const reasons: (string | undefined)[] = events.map((e) => e.reason);
  void reasons;
  const logs: MemorySink = kit.logs;
  await logs.until(/operator started/);
  const done: Job = await kit.until(resource.jobs, "j", (j) => j.status?.succeeded);
  return done;
}

export async function embedderLogsAndMemo(signal: AbortSignal): Promise<string[]> {
  const sink = memorySink("info");
  await run({ signal, logger: new Logger(sink), memo: { greeting: "hello" } });
  return sink.lines;
}

export const started = startOperator;
