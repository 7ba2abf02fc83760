// Which freeze source the operator runs under: none (standalone), Kopf-style peering in the
// cluster or per served namespace, or a Lease for equal replicas. Each runs as a task of the
// given scope and drives the shared Toggle; each removes its own record on exit.

import type { Settings } from "../config/index.ts";
import type { KubeClient } from "../kube/index.ts";
import type { Logger } from "../util/index.ts";
import type { TaskScope } from "../util/index.ts";
import type { Toggle } from "../util/index.ts";
import { LeaseElection, Peering, type PeeringEvents, type PeeringObserver } from "../peering/index.ts";

export interface PeeringStart {
  client: KubeClient;
  toggle: Toggle;
  settings: Settings;
  /** The namespace served, or null for a cluster-wide operator. */
  namespace: string | null;
  logger: Logger;
  scope: TaskScope;
  /** The user named the peering object: a missing peering resource then freezes. */
  mandatory: boolean;
  id?: string;
  /** One per run: what every peering of the run would warn about is said once. */
  notices?: Set<string>;
  /** Resolves once the handlers have finished at shutdown: records are removed only then. */
  handlersDone: () => Promise<void>;
  /** Where a namespace's peering reads its object's events (a shared cluster-wide watch, or its own). */
  events?: PeeringEvents;
  /** Hears of the peers seen and the lease held (the kobun_peers_seen / kobun_lease_held gauges). */
  observer?: PeeringObserver;
}

export function startPeering(options: PeeringStart): void {
  const { client, toggle, settings, namespace, logger, scope, mandatory } = options;
  const peering = settings.peering;
  if (peering.standalone) return;
  const log = logger.child({ component: "peering" });
  if (peering.mode === "lease") {
    const election = new LeaseElection({
      client, toggle, logger: log,
      name: peering.name,
      namespace: namespace ?? process.env.POD_NAMESPACE ?? "default",
      ...(options.id ? { id: options.id } : {}),
      duration: peering.lease.duration,
      renewDeadline: peering.lease.renewDeadline,
      retryPeriod: peering.lease.retryPeriod,
      beforeLeave: options.handlersDone,
      maxLineBytes: settings.watching.lineLimit,
      ...(options.observer ? { observer: options.observer } : {}),
    });
    scope.spawn(`lease ${peering.name}`, (signal) => election.run(signal));
    return;
  }
  const instance = new Peering({
    client, toggle, logger: log, mandatory,
    name: peering.name,
    namespace: peering.clusterwide ? null : namespace,
    priority: peering.priority,
    lifetime: peering.lifetime,
    equalsShare: settings.sharding.enabled,
    group: peering.group,
    ...(options.id ? { id: options.id } : {}),
    ...(options.events && !peering.clusterwide ? { events: options.events } : {}),
    beforeLeave: options.handlersDone,
    maxLineBytes: settings.watching.lineLimit,
    ...(options.notices ? { notices: options.notices } : {}),
    ...(options.observer ? { observer: options.observer } : {}),
  });
  scope.spawn(`peering ${peering.name}@${namespace ?? "cluster"}`, (signal) => instance.run(signal));
}
