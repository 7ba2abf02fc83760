// Manual records for maintenance windows: `kobun freeze` writes one of high priority that
// freezes every lower-priority operator on the peering object; `kobun resume` removes it.

import { manualPeerId } from "./identity.ts";
import { peerRecord } from "./decide.ts";
import { createPeering } from "./presence.ts";
import { isObjectMissing, peeringTarget, writeRecord, type PeeringClient } from "./records.ts";
import type { PeeringGroup } from "./resources.ts";

export interface ManualFreezeOptions {
  client: PeeringClient;
  name: string;
  /** null: the cluster-wide peering object. */
  namespace: string | null;
  group: PeeringGroup;
  /** Seconds the freeze lasts unless renewed or resumed (like `kopf freeze --lifetime`). */
  lifetime: number;
  /** Default 100, like `kopf freeze`: above every ordinary operator. */
  priority?: number;
  /** Shown to the frozen operators' logs and in the peering object. */
  message?: string;
  /** Default `user@host`, so that `resumeManually` from the same machine finds the record. */
  id?: string;
  signal?: AbortSignal;
}

/**
 * `kobun freeze`: writes a manual record of high priority, which freezes every operator of a
 * lower priority on this peering object until it expires or `resumeManually` removes it.
 * Returns the id written. Creates the peering object when it does not exist yet, so a
 * maintenance freeze works before any operator has started.
 */
export async function freezeManually(options: ManualFreezeOptions): Promise<string> {
  const id = options.id ?? manualPeerId();
  const target = peeringTarget(options.group, options.name, options.namespace);
  const record = peerRecord(Date.now(), options.priority ?? 100, options.lifetime, options.message);
  try {
    await writeRecord(options.client, target, id, record, options.signal);
  } catch (error) {
    if (!isObjectMissing(error)) throw error;
    const signal = options.signal ?? new AbortController().signal;
    const created = await createPeering(options.client, target, id, record, signal);
    if (created.kind === "missing") throw new Error(created.why);
    if (created.kind === "error") throw created.error;
    // Lost a race with an operator creating it: write into the object that now exists.
    if (!created.created) await writeRecord(options.client, target, id, record, options.signal);
  }
  return id;
}

/** `kobun resume`: removes the manual record written by `freezeManually` (same id). Returns the id removed. */
export async function resumeManually(
  options: Omit<ManualFreezeOptions, "lifetime" | "priority" | "message">,
): Promise<string> {
  const id = options.id ?? manualPeerId();
  const target = peeringTarget(options.group, options.name, options.namespace);
  await writeRecord(options.client, target, id, null, options.signal);
  return id;
}
