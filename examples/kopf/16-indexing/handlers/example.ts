// Kopf's 16-indexing: two indexes of Pods, kept in memory from the watch: whether each Pod runs,
// and the Pods under each label; probes report from the first; a timer writes the running Pods
// into each KopfExample's status.
//
// Keys are tuples, as Kopf's: [namespace, name] and [label, value] (a list of [key, value] pairs, or a Map).
//
// Workaround (issue 33 adds the native form, marked "issue 33" below): probes (activities) receive
// no indexes: the timer leaves a summary in the operator's memo (an object shared by every
// object's memo), which the probes read.
import { Registry, resource, type Index } from "kobun";
import { Journal, KopfExamples } from "../../kopf.ts";

export const journal = new Journal();

/** The summary the probes read (issue 33: they will read `ctx.indexes.is_running` themselves). */
interface PodSummary { count: number; names: string[] }

/** Registers the indexes, probes and timer; the timer's interval is Kopf's 5 s times `scale`. */
export function indexing(registry: Registry, scale = 1): Registry {
  const { on } = registry;
  on.startup(({ memo }) => { memo.pods = { count: 0, names: [] } satisfies PodSummary; }, { id: "pod_summary" });

  on.index(resource.pods, ({ namespace, name, status }) => [[[namespace ?? "", name], status.phase === "Running"]],
    { id: "is_running" });
  on.index(resource.pods,
    ({ labels, name }) => new Map(Object.entries(labels).map(([label, value]) => [[label, value], name])),
    { id: "by_label" });

  on.probe(({ memo }) => (memo.pods as PodSummary).count, { id: "pod_count", cacheFor: 0 });
  on.probe(({ memo }) => (memo.pods as PodSummary).names, { id: "pod_names", cacheFor: 0 });

  on.timer(KopfExamples, ({ indexes, memo, patch }) => {
    const isRunning = indexes.is_running as Index<boolean, [string, string]>;
    const byLabel = indexes.by_label as Index<string, [string, string]>;
    journal.write(JSON.stringify([...byLabel]));
    const summary = memo.pods as PodSummary;
    summary.count = isRunning.size;
    summary.names = [...isRunning.keys()].map(([, name]) => name);
    patch.status["running-pods"] = [...isRunning]
      .filter(([[namespace], running]) => ["kube-system", "default"].includes(namespace) && running.includes(true))
      .map(([[namespace, name]]) => `${namespace}::${name}`);
  }, { id: "intervalled", interval: 5 * scale });
  return registry;
}

export const registry = indexing(new Registry());
