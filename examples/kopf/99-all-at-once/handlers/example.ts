// Kopf's 99-all-at-once: most kinds of handler in one operator. Startup handlers (one slow, one
// retried), a slow cleanup; creation handlers that post Events, fail once and succeed on the
// retry, and make a labelled child Pod; update, field and deletion handlers; an event handler
// for the Pods with that label. Each says what it does in the operator's log, as Kopf's.
import { label, Registry, TemporaryError, resource, sleep, type KubeObject, type Pod } from "kobun";
import { KopfExamples } from "../../kopf.ts";

/** Registers the handlers with Kopf's seconds (its waits, the retry's backoff) times `scale`. */
export function allAtOnce(registry: Registry, scale = 1): Registry {
  const { on } = registry;
  const seconds = (n: number) => Number((n * scale).toFixed(3));
  on.startup(async ({ logger, signal }) => {
    logger.info(`Starting in ${seconds(1)}s...`);
    await sleep(seconds(1), signal);
  }, { id: "startup_fn_simple" });

  on.startup(({ retry, logger }) => {
    if (retry < 3) throw new TemporaryError(`Going to succeed in ${3 - retry}s`, { delay: seconds(1) });
    logger.info("Starting retried...");
  }, { id: "startup_fn_retried" });

  on.cleanup(async ({ logger, signal }) => {
    logger.info(`Cleaning up in ${seconds(3)}s...`);
    await sleep(seconds(3), signal);
    logger.info("Cleaned up.");
  }, { id: "cleanup_fn" });

  on.create(KopfExamples, ({ event }) => {
    const children: KubeObject[] = []; // Kopf's example makes none here either
    event.info("AnyReason");
    event.post("Warning", "SomeReason", "Cannot do something");
    for (const child of children) event.post("Normal", child, "SomeReason", "Created as part of the job1step");
    return { "job1-status": 100 };
  }, { id: "create_1" });

  on.create(KopfExamples, async ({ retry, signal }) => {
    await sleep(seconds(1), signal); // Kopf's waits blocking on purpose; a blocked event loop would stop kobun's
    if (!retry) throw new Error("Whoops!"); // retried after the backoff, even across a restart
    return { "job2-status": 100 };
  }, { id: "create_2", backoff: seconds(60) });

  on.update(KopfExamples, ({ diff, logger }) => {
    logger.info(`Handling the diff: ${JSON.stringify(diff.map(({ op, path, old, new: now }) => [op, path, old, now]))}`);
  }, { id: "update" });

  on.field(KopfExamples, { field: "spec.lst", id: "update_lst" }, ({ old, new: now, logger }) => {
    logger.info(`Handling the FIELD = ${JSON.stringify(old)} -> ${JSON.stringify(now)}`);
  });

  on.delete(KopfExamples, () => {}, { id: "delete" });

  on.create(KopfExamples, async ({ adopt, api }) => {
    const pod: Pod = {
      apiVersion: "v1", kind: "Pod", metadata: {},
      spec: { containers: [{ name: "the-only-one", image: "busybox", command: ["sh", "-x", "-c", "sleep 1"] }] },
    };
    adopt(pod);
    label(pod, { application: "kopf-example-10" });
    await api.create(pod);
  }, { id: "create_pod", children: ["pods"] });

  on.event(resource.pods, ({ name, logger }) => {
    logger.info(`This pod is special for us: ${name}`);
  }, { id: "example_pod_change", labels: { application: "kopf-example-10" } });
  return registry;
}

export const registry = allAtOnce(new Registry());
