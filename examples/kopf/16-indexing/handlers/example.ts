// Kopf's 16-indexing: two indexes of Pods, kept in memory from the watch: whether each Pod runs,
// and the Pods under each label; probes report from the first; a timer logs the second and writes
// the running Pods into each KopfExample's status.
//
// Written as Kopf's: keys are tuples ([namespace, name] and [label, value], returned as a list of
// [key, value] pairs or a Map), and the probes read `ctx.indexes.is_running` as the timer does.
import { Registry, resource, type Index } from "kobun";
import { KopfExamples } from "../../kopf.ts";

type IsRunning = Index<boolean, [string, string]>;

/** Registers the indexes, probes and timer; the timer's interval is Kopf's 5 s times `scale`. */
export function indexing(registry: Registry, scale = 1): Registry {
  const { on } = registry;
  on.index(resource.pods, ({ namespace, name, status }) => [[[namespace ?? "", name], status.phase === "Running"]],
    { id: "is_running" });
  on.index(resource.pods,
    ({ labels, name }) => new Map(Object.entries(labels).map(([label, value]) => [[label, value], name])),
    { id: "by_label" });

  on.probe(({ indexes }) => (indexes.is_running as IsRunning).size, { id: "pod_count" });
  on.probe(({ indexes }) => [...(indexes.is_running as IsRunning).keys()].map(([, name]) => name), { id: "pod_names" });

  on.timer(KopfExamples, ({ indexes, logger, patch }) => {
    const isRunning = indexes.is_running as IsRunning;
    const byLabel = indexes.by_label as Index<string, [string, string]>;
    logger.info(JSON.stringify([...byLabel])); // Kopf's pprint(dict(by_label))
    patch.status["running-pods"] = [...isRunning]
      .filter(([[namespace], running]) => ["kube-system", "default"].includes(namespace) && running.includes(true))
      .map(([[namespace, name]]) => `${namespace}::${name}`);
  }, { id: "intervalled", interval: 5 * scale });
  return registry;
}

export const registry = indexing(new Registry());
