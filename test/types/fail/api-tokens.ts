// Must NOT typecheck: a typed token's answers keep their type (issue 35, item 5).
import { resource, type Api } from "kobun";
import type { TestOperator } from "kobun/testing";

export async function wrongUses(api: Api, kit: TestOperator): Promise<void> {
  const cm = await api.get(resource.configmaps, "x");
  void cm.spec; // error TS2339: a ConfigMap has no spec
  const data: Record<string, number> | undefined = cm.data; // error TS2322: a ConfigMap's data are strings
  void data;
  const pods = await api.list(resource.pods);
  void pods[0]?.spec?.containers[0]?.imag; // error TS2551: no such field of a container
  const done = await kit.until(resource.jobs, "j", (j) => j.status?.succeeded);
  const succeeded: string | undefined = done.status?.succeeded; // error TS2322: a Job's succeeded is a number
  void succeeded;
  await kit.patchStatus(resource.jobs, "j", { succeeded: "one" }); // error TS2322: succeeded is a number
  await kit.consistently(resource.jobs, "j", (j) => j?.status?.nope, { for: 100 }); // error TS2339: no such status field
  await kit.apply(resource.deployments, { metadata: { name: "web" }, spec: { replicas: "5" } }); // error TS2322: replicas is a number
  await kit.apply(resource.deployments, { metadata: { name: "web" }, spec: { replica: 5 } }); // error TS2561: no such field
}
