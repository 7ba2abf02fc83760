// What peering/ tells about the peers and the lease, without knowing who listens: runtime/
// wires it to the kobun_peers_seen and kobun_lease_held gauges, and a failing peering to
// /healthz (a watch that cannot see the peers leaves the operator frozen, or unsure it may run).

export interface PeeringObserver {
  /** After each look at the peering object: how many live peers other than this operator it holds. */
  peersSeen(count: number): void;
  /** Lease mode: this replica acquired (true) or gave up or lost (false) the lease; false before the first acquire. */
  leaseHeld(held: boolean): void;
  /**
   * The peering object cannot be followed (its watch or our keep-alive keeps failing): `why`,
   * or null once both work again.
   */
  peeringFailing(why: string | null): void;
}
