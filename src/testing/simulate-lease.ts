// The lease fault (an operator in lease mode, peering.mode "lease"): right after a chosen write of
// the operator, an admin takes its Lease (another holder, a fresh renewal), so the live instance
// loses it mid-handler and freezes (its handlers' signals aborted, no new ones started); once the
// instance has said it lost the lease, the admin gives it back (deletes the Lease) and the
// instance acquires it anew and goes on. An operator whose handler writes on after its signal
// aborted, or keeps progress a freeze loses, then fails a check.

import { isConflict, isNotFound, leaseResource, renewedLease, type KubeClient } from "../kube/index.ts";
import type { QuietWatch } from "./simulate-operators.ts";

/** the holder an admin writes into the taken Lease */
export const ADMIN_HOLDER = "simulated-admin";
/** real ms to wait for an instance to say it lost the lease (a bound, not a pace: it is awaited as an event) */
const LOSS_TIMEOUT_MS = 2000;
/** what an instance logs when it sees the Lease taken: the live one loses it; one started since stands by */
const SEEN = ["lost the lease", "standing by"];

interface Into {
  story: string[];
  quiet: QuietWatch;
  /** the operator's log lines so far (where its "lost the lease" shows) */
  logs: { readonly lines: readonly string[] };
}

/** takes the Lease `namespace/name` from the instance, waits for it to freeze, gives it back; tells the story */
export async function takeLease(admin: KubeClient, namespace: string, name: string, into: Into): Promise<void> {
  const seenBefore = countSeen(into.logs.lines);
  try {
    const taken = await overwriteHolder(admin, namespace, name);
    if (!taken) {
      into.story.push(`  no Lease ${namespace}/${name} to take: the operator holds none`);
      return;
    }
    into.story.push(`  an admin took Lease ${namespace}/${name} (holder ${ADMIN_HOLDER}): the operator loses it`);
    const seen = await until(() => countSeen(into.logs.lines) > seenBefore, into.quiet, LOSS_TIMEOUT_MS);
    into.story.push(seen ? "  the operator froze (lost the lease)" :
      `  the operator did not say it lost the lease within ${LOSS_TIMEOUT_MS} ms`);
    await admin.delete(leaseResource, namespace, name);
    into.story.push("  the admin gave the Lease back (deleted it): the operator acquires it again");
  } catch (error) {
    into.story.push(`  the Lease could not be taken or given back: ${(error as Error)?.message ?? error}`);
  } finally {
    into.quiet.activity();
  }
}

/** another holder with a fresh renewal, written over whatever the instance renewed last; false if no Lease */
async function overwriteHolder(admin: KubeClient, namespace: string, name: string): Promise<boolean> {
  for (;;) {
    const lease = await admin.get(leaseResource, namespace, name).catch((error: unknown) => {
      if (isNotFound(error)) return undefined;
      throw error;
    });
    if (lease === undefined) return false;
    const duration = ((lease.spec as { leaseDurationSeconds?: number })?.leaseDurationSeconds ?? 15) * 1000;
    try {
      await admin.replace(leaseResource, namespace, name, renewedLease(lease, ADMIN_HOLDER, duration, Date.now()));
      return true;
    } catch (error) {
      if (!isConflict(error)) throw error; // the instance renewed in between: read it again
    }
  }
}

function countSeen(lines: readonly string[]): number {
  return lines.filter((line) => SEEN.some((words) => line.includes(words))).length;
}

/** resolves true once `holds()` does (checked at each activity), false after `ms` of real time */
async function until(holds: () => boolean, quiet: QuietWatch, ms: number): Promise<boolean> {
  const deadline = performance.now() + ms;
  while (!holds()) {
    const left = deadline - performance.now();
    if (left <= 0) return false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([quiet.next(), new Promise((resolve) => (timer = setTimeout(resolve, left)))]);
    clearTimeout(timer);
  }
  return true;
}
