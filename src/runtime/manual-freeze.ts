// What `kobun freeze` and `kobun resume` need: a client and the manual peering record.
// cli/ imports only runtime/ and config/ (test/contracts/rooms.ts); this is its door to them.

export { KubeClient } from "../kube/client.ts";
export { freezeManually, resumeManually } from "../peering/index.ts";
