// The Table printers of the workload kinds (Pods, the controllers of Pods, HPAs), as
// kube-apiserver's (pkg/printers/internalversion/printers.go): their columns and cells. The
// sandbox runs no controllers, so the cells show whatever status a test wrote.

import {
  AGE, age, between, col, containerCells, labelText, NAME, selectorString, selectorText, since, wide,
  type Cell, type Printer,
} from "./table-columns.ts";

const CONTAINERS = [wide("Containers"), wide("Images")];

/** printPod's Status: the phase or reason, overridden by init containers' and containers' states */
// long: upstream's one decision, kept whole so its precedence reads as one.
function podCells(pod: any): Cell[] {
  const status = pod.status ?? {};
  const spec = pod.spec ?? {};
  let reason: string = status.reason || status.phase || "";
  if ((status.conditions ?? []).some((c: any) => c.type === "PodScheduled" && c.reason === "SchedulingGated")) {
    reason = "SchedulingGated";
  }
  const inits: any[] = spec.initContainers ?? [];
  const restartable = (name: string) => inits.find((c) => c.name === name)?.restartPolicy === "Always";
  const total = (spec.containers ?? []).length + inits.filter((c) => c.restartPolicy === "Always").length;
  let ready = 0;
  let restarts = 0;
  let lastRestart = "";
  const noteRestart = (c: any) => {
    restarts += c.restartCount ?? 0;
    const finished = c.lastState?.terminated?.finishedAt;
    if (finished && (!lastRestart || Date.parse(finished) > Date.parse(lastRestart))) lastRestart = finished;
  };
  let initializing = false;
  const initStatuses: any[] = status.initContainerStatuses ?? [];
  for (const [i, c] of initStatuses.entries()) {
    noteRestart(c);
    const terminated = c.state?.terminated;
    const waiting = c.state?.waiting;
    if (terminated && terminated.exitCode === 0) continue;
    if (restartable(c.name) && c.started) {
      if (c.ready) ready++;
      continue;
    }
    if (terminated) {
      reason = terminated.reason ? `Init:${terminated.reason}`
        : terminated.signal ? `Init:Signal:${terminated.signal}` : `Init:ExitCode:${terminated.exitCode ?? 0}`;
    } else if (waiting?.reason && waiting.reason !== "PodInitializing") {
      reason = `Init:${waiting.reason}`;
    } else {
      reason = `Init:${i}/${inits.length}`;
    }
    initializing = true;
    break;
  }
  const initialized = (status.conditions ?? []).some((c: any) => c.type === "Initialized" && c.status === "True");
  if (!initializing || initialized) {
    restarts = 0;
    lastRestart = "";
    for (const c of initStatuses.filter((s) => restartable(s.name))) noteRestart(c);
    let running = false;
    for (const c of [...(status.containerStatuses ?? [])].reverse()) {
      noteRestart(c);
      const { waiting, terminated } = c.state ?? {};
      if (waiting?.reason) reason = waiting.reason;
      else if (terminated?.reason) reason = terminated.reason;
      else if (terminated) {
        reason = terminated.signal ? `Signal:${terminated.signal}` : `ExitCode:${terminated.exitCode ?? 0}`;
      }
      else if (c.ready && c.state?.running) {
        running = true;
        ready++;
      }
    }
    if (reason === "Completed" && running) {
      const podReady = (status.conditions ?? []).some((c: any) => c.type === "Ready" && c.status === "True");
      reason = podReady ? "Running" : "NotReady";
    }
  }
  if (pod.metadata?.deletionTimestamp) {
    if (status.reason === "NodeLost") reason = "Unknown";
    else if (status.phase !== "Succeeded" && status.phase !== "Failed") reason = "Terminating";
  }
  const restartText = restarts && lastRestart ? `${restarts} (${since(lastRestart)} ago)` : String(restarts);
  return [pod.metadata.name, `${ready}/${total}`, reason, restartText, age(pod), ...podWideCells(pod)];
}

function podWideCells(pod: any): Cell[] {
  const gates: any[] = pod.spec?.readinessGates ?? [];
  const conditions: any[] = pod.status?.conditions ?? [];
  const passed = gates.filter((g) => conditions.find((c) => c.type === g.conditionType)?.status === "True").length;
  return [pod.status?.podIPs?.[0]?.ip || pod.status?.podIP || "<none>", pod.spec?.nodeName || "<none>",
    pod.status?.nominatedNodeName || "<none>", gates.length ? `${passed}/${gates.length}` : "<none>"];
}

/** ReplicaSets and ReplicationControllers: desired, current and ready replicas */
const replicas = (selector: (o: any) => string): Printer => ({
  columns: [NAME, col("Desired", "integer"), col("Current", "integer"), col("Ready", "integer"), AGE, ...CONTAINERS,
    wide("Selector")],
  cells: (o) => [o.metadata.name, o.spec?.replicas ?? 0, o.status?.replicas ?? 0, o.status?.readyReplicas ?? 0, age(o),
    ...containerCells(o.spec?.template), selector(o)],
});

const hasCondition = (o: any, type: string) =>
  (o.status?.conditions ?? []).find((c: any) => c.type === type)?.status === "True";

function jobCells(o: any): Cell[] {
  const succeeded = o.status?.succeeded ?? 0;
  const parallelism = o.spec?.parallelism ?? 0;
  const completions = o.spec?.completions !== undefined && o.spec?.completions !== null
    ? `${succeeded}/${o.spec.completions}`
    : parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`;
  const start = o.status?.startTime;
  const duration = !start ? "" : o.status?.completionTime ? between(start, o.status.completionTime) : since(start);
  const status = hasCondition(o, "Complete") ? "Complete" : hasCondition(o, "Failed") ? "Failed"
    : o.metadata?.deletionTimestamp ? "Terminating" : hasCondition(o, "Suspended") ? "Suspended"
    : hasCondition(o, "FailureTarget") ? "FailureTarget" : "Running";
  return [o.metadata.name, status, completions, duration, age(o), ...containerCells(o.spec?.template),
    selectorText(o.spec?.selector)];
}

const boolText = (v: unknown) => (v === undefined || v === null ? "<unset>" : v ? "True" : "False");

/** formatHPAMetrics: each metric's current value (or <unknown>) over its target, two at most */
function hpaTargets(o: any): string {
  const specs: any[] = o.spec?.metrics ?? [];
  if (!specs.length) return "<none>";
  const statuses: any[] = o.status?.currentMetrics ?? [];
  const shown = specs.map((spec, i) => {
    const current = statuses[i];
    const source = spec.type === "ContainerResource" ? "containerResource" : String(spec.type ?? "").toLowerCase();
    const target = spec[source]?.target ?? {};
    const now = current?.[source]?.current;
    if (spec.type === "Resource" || spec.type === "ContainerResource") {
      const name = spec[source]?.name;
      if (target.averageValue !== undefined) {
        return `${name}: ${now?.averageValue ?? "<unknown>"}/${target.averageValue}`;
      }
      const percent = now?.averageUtilization !== undefined ? `${now.averageUtilization}%` : "<unknown>";
      const goal = target.averageUtilization !== undefined ? `${target.averageUtilization}%` : "<auto>";
      return `${name}: ${percent}/${goal}`;
    }
    if (spec.type === "Pods") return `${now?.averageValue ?? "<unknown>"}/${target.averageValue}`;
    if (spec.type === "Object" || spec.type === "External") {
      if (target.averageValue !== undefined) return `${now?.averageValue ?? "<unknown>"}/${target.averageValue} (avg)`;
      return `${now?.value ?? "<unknown>"}/${target.value}`;
    }
    return "<unknown type>";
  });
  return shown.length > 2 ? `${shown.slice(0, 2).join(", ")} + ${shown.length - 2} more...` : shown.join(", ");
}

/** The printers of the workload kinds, by `group/plural`. */
export const WORKLOAD_PRINTERS: Record<string, Printer> = {
  "/pods": {
    columns: [NAME, col("Ready"), col("Status"), col("Restarts"), AGE, wide("IP"), wide("Node"), wide("Nominated Node"),
      wide("Readiness Gates")],
    cells: podCells,
  },
  "/replicationcontrollers": replicas((o) => labelText(o.spec?.selector)),
  "apps/replicasets": replicas((o) => selectorText(o.spec?.selector)),
  "apps/deployments": {
    columns: [NAME, col("Ready"), col("Up-to-date"), col("Available"), AGE, ...CONTAINERS, wide("Selector")],
    cells: (o) => [o.metadata.name, `${o.status?.readyReplicas ?? 0}/${o.spec?.replicas ?? 0}`,
      o.status?.updatedReplicas ?? 0, o.status?.availableReplicas ?? 0, age(o), ...containerCells(o.spec?.template),
      selectorString(o.spec?.selector)],
  },
  "apps/daemonsets": {
    columns: [NAME, col("Desired", "integer"), col("Current", "integer"), col("Ready", "integer"),
      col("Up-to-date", "integer"), col("Available", "integer"), col("Node Selector"), AGE, ...CONTAINERS,
      wide("Selector")],
    cells: (o) => {
      const s = o.status ?? {};
      return [o.metadata.name, s.desiredNumberScheduled ?? 0, s.currentNumberScheduled ?? 0, s.numberReady ?? 0,
        s.updatedNumberScheduled ?? 0, s.numberAvailable ?? 0, labelText(o.spec?.template?.spec?.nodeSelector), age(o),
        ...containerCells(o.spec?.template), selectorText(o.spec?.selector)];
    },
  },
  "apps/statefulsets": {
    columns: [NAME, col("Ready"), AGE, ...CONTAINERS],
    cells: (o) => [o.metadata.name, `${o.status?.readyReplicas ?? 0}/${o.spec?.replicas ?? 0}`, age(o),
      ...containerCells(o.spec?.template)],
  },
  "batch/jobs": {
    columns: [NAME, col("Status"), col("Completions"), col("Duration"), AGE, ...CONTAINERS, wide("Selector")],
    cells: jobCells,
  },
  "batch/cronjobs": {
    columns: [NAME, col("Schedule"), col("Timezone"), col("Suspend", "boolean"), col("Active", "integer"),
      col("Last Schedule"), AGE, ...CONTAINERS, wide("Selector")],
    cells: (o) => {
      const job = o.spec?.jobTemplate?.spec;
      const last = o.status?.lastScheduleTime;
      return [o.metadata.name, o.spec?.schedule ?? "", o.spec?.timeZone ?? "<none>", boolText(o.spec?.suspend),
        (o.status?.active ?? []).length, last ? since(last) : "<none>", age(o), ...containerCells(job?.template),
        selectorText(job?.selector)];
    },
  },
  "autoscaling/horizontalpodautoscalers": {
    columns: [NAME, col("Reference"), col("Targets"), col("MinPods"), col("MaxPods"), col("Replicas"), AGE],
    cells: (o) => [o.metadata.name, `${o.spec?.scaleTargetRef?.kind ?? ""}/${o.spec?.scaleTargetRef?.name ?? ""}`,
      hpaTargets(o), o.spec?.minReplicas !== undefined ? String(o.spec.minReplicas) : "<unset>",
      o.spec?.maxReplicas ?? 0, o.status?.currentReplicas ?? 0, age(o)],
  },
};
