// What a Peering, and a LeaseElection (lease mode), are built from.

import type { Logger } from "../util/index.ts";
import type { Toggle } from "../util/index.ts";
import type { PeeringEvents } from "./feed.ts";
import type { PeeringObserver } from "./observer.ts";
import type { PeeringClient } from "./records.ts";
import type { PeeringGroup } from "./resources.ts";

export interface PeeringOptions {
  client: PeeringClient;
  /** Replicas of the same priority share the objects by shards instead of freezing each other (decide.ts). */
  equalsShare?: boolean;
  /** The operator's freeze gate, shared with the resource watchers. */
  toggle: Toggle;
  /** The peering object's name. Default in kobun's config: "default". */
  name: string;
  /** The namespace of a namespaced peering object; null for the cluster-wide one. */
  namespace: string | null;
  /** Higher wins; equal priorities freeze each other. Kopf's default is 0, its `--dev` 666. */
  priority: number;
  /** Seconds our record stays valid without a keep-alive (default in config: 60). Whole seconds on the wire. */
  lifetime: number;
  /** "kobun.dev", or "kopf.dev" to coordinate with Kopf-based operators. */
  group: PeeringGroup;
  /** Default: `peerId()`. */
  id?: string;
  logger: Logger;
  /** The user asked for peering explicitly: a missing peering resource then freezes instead of disabling peering. */
  mandatory: boolean;
  /** Upper bound for removing our record on exit, in ms. Default 2000. */
  exitTimeoutMs?: number;
  /** Awaited on exit before our record is removed (the runtime: "the handlers have finished"). */
  beforeLeave?: () => Promise<void>;
  /** Shared by the peerings of one run, so a warning true of them all is logged once (then at INFO). */
  notices?: Set<string>;
  /** The peering object's events from a shared watch (a PeeringFeed); default: a watch of its own. */
  events?: PeeringEvents;
  /** Re-check delays while the peering resource is missing or unreadable. Default 500 ms → 10 s. */
  recheck?: { initialMs: number; maxMs: number };
  /** The longest watch line accepted, in bytes (watching.lineLimit); default the Watcher's. */
  maxLineBytes?: number;
  /** Hears how many live peers there are after each look (kobun_peers_seen); none by default. */
  observer?: Pick<PeeringObserver, "peersSeen" | "peeringFailing">;
}

export interface LeaseElectionOptions {
  client: PeeringClient;
  toggle: Toggle;
  /** The Lease's name. */
  name: string;
  /** Leases are namespaced: where the Lease lives (e.g. the operator's own namespace). */
  namespace: string;
  /** Default: `peerId()`. */
  id?: string;
  // The timings are settings (peering.lease.*): their defaults are the settings schema's alone.
  /** Seconds a lease is valid after its last renewal. */
  duration: number;
  /** Seconds the holder may fail to renew before it gives up (freezes). */
  renewDeadline: number;
  /** Seconds between attempts to acquire or renew. */
  retryPeriod: number;
  logger: Logger;
  /** Upper bound for releasing the lease on exit, in ms. Default 2000. */
  exitTimeoutMs?: number;
  /** Awaited on exit before the lease is released (the runtime: "the handlers have finished"). */
  beforeLeave?: () => Promise<void>;
  /** The longest watch line accepted, in bytes (watching.lineLimit); default the Watcher's. */
  maxLineBytes?: number;
  /** Hears whether the lease is held (kobun_lease_held); none by default. */
  observer?: Pick<PeeringObserver, "leaseHeld">;
}
