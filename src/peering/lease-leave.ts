// Leaving the lease (lease mode): on exit, the holder writes it free so that a standby takes
// over at once, bounded by exitTimeoutMs. Apart from lease.ts, whose election runs as long as
// the operator does: this runs once, as it stops (presence.ts's leavePeering is its peering twin).

import { isConflict } from "../kube/index.ts";
import { releasedLease, specOf } from "../kube/index.ts";
import type { KubeObject } from "../kube/index.ts";
import type { Logger } from "../util/index.ts";
import type { LeaseElectionOptions } from "./options.ts";
import { leaseResource } from "./resources.ts";

/** What leaving needs of the election. */
export interface Leaving {
  options: Pick<LeaseElectionOptions, "client" | "namespace" | "name" | "exitTimeoutMs">;
  id: string;
  /** The freshest Lease known; `read` gets it again after a 409. */
  lease: KubeObject | undefined;
  read(signal: AbortSignal): Promise<KubeObject | undefined>;
  log: Logger;
  /** The lease's duration (ms): how long a standby waits when the release fails. */
  durationMs: number;
}

/**
 * Hands the lease over: no holder, 1-second duration, so a standby takes it at once.
 * A renewal aborted by the exit may still have reached the server, so our copy can be one
 * version behind: a 409 re-reads, and releases only if the lease is still ours. False when a
 * request failed (then a standby takes over when the lease expires).
 */
export async function leaveLease(leaving: Leaving): Promise<boolean> {
  const { client, namespace, name, exitTimeoutMs } = leaving.options;
  const controller = new AbortController();
  const tooLong = () => controller.abort(new DOMException("releasing the lease took too long", "TimeoutError"));
  const timer = setTimeout(tooLong, exitTimeoutMs ?? 2000);
  const signal = controller.signal;
  try {
    let lease = leaving.lease;
    for (let round = 0; round < 3 && lease; round++) {
      if (specOf(lease).holderIdentity !== leaving.id) break;
      try {
        await client.replace(leaseResource, namespace, name, releasedLease(lease, Date.now()), { signal });
        leaving.log.info("released the lease");
        break;
      } catch (error) {
        if (!isConflict(error)) throw error;
        lease = await leaving.read(signal);
      }
    }
    return true;
  } catch (error) {
    leaving.log.warn("could not release the lease; a standby takes over when it expires", {
      error: error instanceof Error ? error.message : String(error),
      duration: leaving.durationMs / 1000,
    });
    return false;
  } finally {
    clearTimeout(timer);
  }
}
