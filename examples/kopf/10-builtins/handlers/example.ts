// Kopf's 10-builtins: handlers for a built-in resource, Pods. Each Pod seen (created, or found
// again after a restart) gets a background task that deletes it after a while; a Pod deleted
// before then has its task cancelled. The task logs through the handler's logger, as Kopf's.
import { ApiError, Registry, resource, type Api, type HandlerContext, type Logger, type Pod } from "kobun";

export const registry = new Registry();
const { on } = registry;
/** Seconds before a Pod is killed (Kopf's 30; a test shortens it). */
export const killer = { timeout: 30 };

/** The running tasks by "namespace/name": aborting one cancels it. */
const tasks = new Map<string, AbortController>();

async function podInSight({ namespace, name, api, logger }: HandlerContext<Pod>): Promise<void> {
  if (!namespace || namespace.startsWith("kube-")) return;
  const key = `${namespace}/${name}`;
  if (tasks.has(key)) return;
  const cancel = new AbortController();
  tasks.set(key, cancel);
  void podKiller(api, logger, name, cancel.signal).finally(() => {
    if (tasks.get(key) === cancel) tasks.delete(key);
  });
}
on.create(resource.pods, podInSight, { id: "pod_in_sight" });
on.resume(resource.pods, podInSight, { id: "pod_in_sight" });

on.delete(resource.pods, ({ namespace, name }) => {
  tasks.get(`${namespace}/${name}`)?.abort(); // the task says it was cancelled
}, { id: "pod_deleted" });

async function podKiller(api: Api, logger: Logger, name: string, cancel: AbortSignal): Promise<void> {
  logger.info(`=== Pod killing happens in ${killer.timeout}s.`);
  const slept = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(true), killer.timeout * 1000);
    cancel.addEventListener("abort", () => { clearTimeout(timer); resolve(false); }, { once: true });
  });
  if (!slept) return logger.info("=== Pod killing is cancelled!");
  logger.info("=== Pod killing happens NOW!");
  try {
    await api.delete(resource.pods, name); // in the handled Pod's namespace
  } catch (error) {
    if (!(error instanceof ApiError && error.code === 404)) logger.error("the Pod could not be deleted", { error });
  }
}
