// Kopf's 13-hooks: the operator-wide handlers. Startup handlers run before any watch opens (one
// of them fails three times with a TemporaryError, retried after its delay, before it succeeds);
// a login handler gives the credentials; probes add values to /healthz; an event handler starts
// a background task per Pod, and the cleanup handler asks them all to stop at shutdown.
import { Registry, TemporaryError, resource, sleep, type Logger } from "kobun";

export const registry = new Registry();
const { on } = registry;
/** Seconds: the startup retries' delay (Kopf's 1), the login's wait (2), the tasks' pace (1–10); a test shortens them. */
export const timing = { retryDelay: 1, loginDelay: 2, serveEvery: () => 1 + Math.floor(Math.random() * 10) };
/** Where the login handler finds the cluster (Kopf's reads the environment's kubeconfig). */
export const cluster = { kubeconfig: "" };

/** Each Pod's stop flag, by namespace and name. */
const stoppers = new Map<string, Map<string, AbortController>>();
let lock: Promise<void> | undefined; // Kopf's asyncio.Lock: a chain of promises here

on.startup(({ logger }) => {
  logger.info("Initialising the task-lock...");
  lock = Promise.resolve();
}, { id: "startup_fn_simple" });

on.startup(({ retry, logger }) => {
  if (retry < 3) throw new TemporaryError(`Going to succeed in ${3 - retry}s`, { delay: timing.retryDelay });
  logger.info("Starting retried...");
}, { id: "startup_fn_retried" });

on.cleanup(({ logger }) => {
  logger.info("Cleaning up...");
  for (const byName of stoppers.values()) for (const flag of byName.values()) flag.abort();
  logger.info("All pod-tasks are requested to stop...");
}, { id: "cleanup_fn" });

on.login(async ({ signal, logger }) => {
  logger.info(`Logging in in ${timing.loginDelay}s...`);
  await sleep(timing.loginDelay, signal);
  return { kubeconfig: cluster.kubeconfig };
}, { id: "login_fn", errors: "permanent" }); // Kopf's errors=kopf.ErrorsMode.PERMANENT

on.probe(() => [...stoppers.values()].reduce((sum, byName) => sum + byName.size, 0), { id: "tasks_count" });
on.probe(() => Object.fromEntries([...stoppers].map(([namespace, byName]) => [namespace, [...byName.keys()].sort()])),
  { id: "monitored_objects" });

on.event(resource.pods, async ({ namespace, name, logger }) => {
  const ns = namespace ?? "";
  const turn = (lock ?? Promise.resolve()).then(() => {
    const byName = stoppers.get(ns) ?? new Map<string, AbortController>();
    stoppers.set(ns, byName);
    if (byName.has(name)) return;
    const flag = new AbortController();
    byName.set(name, flag);
    void serve(logger, flag.signal);
  });
  lock = turn;
  await turn;
}, { id: "pod_task" });

async function serve(logger: Logger, stop: AbortSignal): Promise<void> {
  while (!stop.aborted) {
    await sleep(timing.serveEvery(), stop);
    if (!stop.aborted) logger.info("Served by the background task.");
  }
  logger.info("Serving is finished by request.");
}
