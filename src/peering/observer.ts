// What peering/ tells about the peers and the lease, without knowing who listens: runtime/
// wires it to the kobun_peers_seen and kobun_lease_held gauges.

export interface PeeringObserver {
  /** After each look at the peering object: how many live peers other than this operator it holds. */
  peersSeen(count: number): void;
  /** Lease mode: this replica acquired (true) or gave up or lost (false) the lease; false before the first acquire. */
  leaseHeld(held: boolean): void;
}
