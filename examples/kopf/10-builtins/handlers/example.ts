// Kopf's 10-builtins: handlers for a built-in resource, Pods. Each Pod seen (created, or found
// again after a restart) gets a background task that deletes it after a while; a Pod deleted
// before then has its task cancelled.
import { ApiError, Registry, resource, type Api, type HandlerContext, type Pod } from "kobun";
import { Journal } from "../../kopf.ts";

export const registry = new Registry();
const { on } = registry;
export const journal = new Journal();
/** Seconds before a Pod is killed (Kopf's 30; a test shortens it). */
export const killer = { timeout: 30 };

/** The running tasks by "namespace/name": aborting one cancels it. */
const tasks = new Map<string, AbortController>();

async function podInSight({ namespace, name, api }: HandlerContext<Pod>): Promise<void> {
  if (!namespace || namespace.startsWith("kube-")) return;
  const key = `${namespace}/${name}`;
  if (tasks.has(key)) return;
  const cancel = new AbortController();
  tasks.set(key, cancel);
  void podKiller(api, namespace, name, cancel.signal).finally(() => {
    if (tasks.get(key) === cancel) tasks.delete(key);
  });
}
on.create(resource.pods, podInSight, { id: "pod_in_sight" });
on.resume(resource.pods, podInSight, { id: "pod_in_sight" });

on.delete(resource.pods, ({ namespace, name }) => {
  tasks.get(`${namespace}/${name}`)?.abort(); // the task says it was cancelled
}, { id: "pod_deleted" });

async function podKiller(api: Api, namespace: string, name: string, cancel: AbortSignal): Promise<void> {
  const where = `[${namespace}/${name}]`;
  journal.write(`${where} === Pod killing happens in ${killer.timeout}s.`);
  const slept = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(true), killer.timeout * 1000);
    cancel.addEventListener("abort", () => { clearTimeout(timer); resolve(false); }, { once: true });
  });
  if (!slept) return journal.write(`${where} === Pod killing is cancelled!`);
  journal.write(`${where} === Pod killing happens NOW!`);
  try {
    // "pods", not the token resource.pods: ctx.api takes a token as an already resolved resource,
    // and a built-in's token does not say it is namespaced (the DELETE went to /api/v1/pods/NAME).
    await api.delete("pods", name, { namespace });
  } catch (error) {
    if (!(error instanceof ApiError && error.code === 404)) journal.write(`${where} ${error}`);
  }
}
