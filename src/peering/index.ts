// peering/: which of several operators (or replicas) may run. It writes this operator's
// record into a peering object, reads the others', decides frozen / not frozen by priority
// and liveness (`decide`, pure), drives the shared freeze Toggle, and removes its record on
// exit. Lease mode does the same job with a coordination.k8s.io Lease for equal replicas.
//
// It must never: ignore events instead of freezing (the Toggle closes the watch streams),
// log per event while frozen, or leave a timer, request or record behind after run() returns.
// It may import kube/, watching/ and util/ only.

export {
  decide, formatTime, keepaliveInterval, parsePeers, parseTime, peerRecord, type Decision, type Peer, type PeerRecord,
} from "./decide.ts";
export { manualPeerId, newPeerId, peerId } from "./identity.ts";
export { LeaseElection, type LeaseElectionOptions } from "./lease.ts";
export type { PeeringObserver } from "./observer.ts";
export { Peering, type PeeringOptions } from "./peering.ts";
export { PeeringFeed, type PeeringEvents } from "./feed.ts";
export { freezeManually, resumeManually, type ManualFreezeOptions } from "./manual.ts";
export { isResourceMissing, type PeeringClient, type PeeringTarget } from "./records.ts";
export {
  crdResource,
  leaseResource,
  peeringCRD,
  peeringCRDs,
  peeringCRDsYAML,
  peeringObject,
  peeringResource,
  type PeeringGroup,
} from "./resources.ts";
