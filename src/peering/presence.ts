// Is peering set up here? One GET answers it: the peering object is there; or only the object
// is missing (then we create it, with our record in it: the CRD is installed, so peering is
// meant to be used); or the resource itself is not served (no CRD) or not readable (RBAC).
// The caller decides what a missing peering means (freeze if mandatory, else run unpeered).

import { isConflict, isForbidden, isNotFound } from "../kube/index.ts";
import { resourceName, type KubeObject } from "../kube/index.ts";
import { settledSignal, sleep, type Logger } from "../util/index.ts";
import type { PeerRecord } from "./decide.ts";
import {
  describeTarget, isObjectMissing, isResourceMissing, writeRecord, type PeeringClient, type PeeringTarget,
} from "./records.ts";

export type Presence =
  | { kind: "ready"; created: boolean }
  /** `notServed`: the resource itself is absent (no CRD), not just the object. */
  | { kind: "missing"; why: string; notServed: boolean }
  /** Anything else (server trouble, network): worth retrying as it is. */
  | { kind: "error"; error: unknown };

export async function findPeering(
  client: PeeringClient, target: PeeringTarget, id: string, record: PeerRecord, signal: AbortSignal,
): Promise<Presence> {
  const { resource, namespace, name } = target;
  try {
    await client.get(resource, namespace, name, { signal });
    return { kind: "ready", created: false };
  } catch (error) {
    if (isResourceMissing(error)) return notServed(target);
    if (isForbidden(error)) {
      const why =
        `forbidden to read ${resourceName(resource)} ${describeTarget(target)}: ` +
        "grant get, list, watch, create and patch on it";
      return { kind: "missing", why, notServed: false };
    }
    if (!isObjectMissing(error)) return { kind: "error", error };
  }
  return createPeering(client, target, id, record, signal);
}

/** Creates the peering object holding our record; "ready" too when someone else created it first. */
export async function createPeering(
  client: PeeringClient, target: PeeringTarget, id: string, record: PeerRecord, signal: AbortSignal,
): Promise<Presence> {
  const { resource, namespace, name } = target;
  const body: KubeObject = {
    apiVersion: `${resource.group}/${resource.version}`,
    kind: resource.kind,
    metadata: namespace === null ? { name } : { name, namespace },
    status: { [id]: record },
  };
  try {
    await client.create(resource, namespace, body, { signal });
    return { kind: "ready", created: true };
  } catch (error) {
    if (isConflict(error)) return { kind: "ready", created: false };
    if (isResourceMissing(error)) return notServed(target);
    if (isForbidden(error) || isNotFound(error)) {
      const why =
        `the peering object ${describeTarget(target)} does not exist and cannot be created (${errorText(error)})`;
      return { kind: "missing", why, notServed: false };
    }
    return { kind: "error", error };
  }
}

function notServed(target: PeeringTarget): Presence {
  return {
    kind: "missing",
    why: `${resourceName(target.resource)} is not served: install crds/peering-${target.resource.group}.yaml`,
    notServed: true,
  };
}

/**
 * Running unpeered is safe for one replica only: two would both handle every object. Kopf
 * warns here too and goes on, so a single-replica deployment without the CRD keeps working;
 * the warning says what it costs and how to fix it. Said once per run (`notices`, shared by
 * its peerings), not once per namespace served.
 */
/** `sharded`: the replicas share the objects by their shard Leases anyway; only a higher priority's freeze is lost. */
export function warnUnpeered(log: Logger, why: string, notices?: Set<string>, sharded = false): void {
  const fact = `unpeered: ${why}`;
  if (notices?.has(fact)) return log.info("peering is not in use", { why });
  notices?.add(fact);
  const message = sharded
    ? "peering is not in use: the sharded replicas share the objects, but no operator of higher priority " +
      "(`kobun freeze`, a --dev operator) can freeze them. Install the peering CRD (`kobun manifests` prints it)"
    : "peering is not in use: if more than one replica of this operator runs, each handles every object. " +
      "Install the peering CRD (`kobun manifests` prints it) for replicas to take turns, " +
      "or pass --standalone if one replica is meant";
  log.warn(message, { why });
}

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Removes our own record so the next operator does not wait for our ghost, within `timeoutMs`. True when removed. */
export async function leavePeering(
  client: PeeringClient, target: PeeringTarget, id: string, log: Logger, timeoutMs: number, lifetime: number,
): Promise<boolean> {
  const controller = new AbortController();
  const tooLong = () => controller.abort(new DOMException("removing the peering record took too long", "TimeoutError"));
  const timer = setTimeout(tooLong, timeoutMs);
  try {
    await writeRecord(client, target, id, null, controller.signal);
    log.debug("removed own peering record");
    return true;
  } catch (error) {
    if (isObjectMissing(error) || isResourceMissing(error)) return false;
    const fields = { error: errorText(error), lifetime };
    log.warn("could not remove own peering record; peers will wait until it expires", fields);
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * At a stop, before our record is removed: writes it again each time it is due (`intervalMs` after the
 * last write; a failed write is tried again 500 ms later) until `done` (our handlers have ended), so the
 * peers stay frozen however long the shutdown's grace lets them run. A write still on its way when `done`
 * comes is cut short (the record is removed next); an object (or resource) gone ends it at once: no peer
 * can read a record there, and a namespace's peering stopped by the namespace's deletion is not kept
 * retrying until the operator stops.
 */
export async function keepRecordUntil(
  write: (signal: AbortSignal) => Promise<unknown>, writtenAt: number, intervalMs: number,
  done: Promise<void> = Promise.resolve(),
): Promise<void> {
  const finished = settledSignal(done);
  let due = writtenAt + intervalMs;
  while (await sleep(due - Date.now(), finished)) {
    const at = Date.now();
    try {
      await write(finished);
      due = at + intervalMs;
    } catch (error) {
      if (isNotFound(error)) return;
      due = Date.now() + 500;
    }
  }
  await done;
}
