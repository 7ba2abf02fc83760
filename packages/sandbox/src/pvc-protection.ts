// kube-controller-manager's pvc-protection controller, the one controller a claim cannot do without: the real
// server gives every new PersistentVolumeClaim the finalizer `kubernetes.io/pvc-protection` (defaults-kinds.ts),
// and without its controller a deleted claim (an operator's child, a deleted namespace's) would stay Terminating
// for good. Once a claim is marked for deletion and no Pod of its namespace that has not finished mounts it
// (directly, or as the pod's generic ephemeral volume), the finalizer goes; a claim in use waits for its Pods.
// Like the garbage collector (gc.ts) it acts a microtask after the write that caused it.

import { batched, type Collectable } from "./gc.ts";
import { PVC_PROTECTION } from "./defaults-kinds.ts";
import type { ChangeEvent, Store } from "./store.ts";

const CLAIMS = "/persistentvolumeclaims";
const PODS = "/pods";

export class PvcProtection {
  /** a namespace whose terminating claims to look at, a microtask after the write that made it due */
  private readonly schedule = batched((ns) => this.release(ns));

  constructor(private readonly store: Store, private readonly objects: Collectable) {
    store.subscribe((event) => this.observe(event));
  }

  private observe(event: ChangeEvent): void {
    // a Pod gone or finished may release the claims of its namespace
    if (event.res === PODS && event.type !== "ADDED") this.schedule(event.ns);
    else if (event.res === CLAIMS && event.type === "MODIFIED" && terminating(event.object)) this.schedule(event.ns);
  }

  private release(ns: string): void {
    const claims = this.store.list(CLAIMS, ns).map(({ body }) => body).filter(terminating);
    if (!claims.length) return;
    const used = new Set(this.store.list(PODS, ns).flatMap(({ body }) => claimsOf(body)));
    for (const claim of claims) {
      if (used.has(claim.metadata.name)) continue;
      this.objects.writeMetadata(CLAIMS, ns, claim.metadata.name, (meta) => {
        meta.finalizers = (meta.finalizers ?? []).filter((f: string) => f !== PVC_PROTECTION);
      });
    }
  }
}

function terminating(claim: any): boolean {
  return Boolean(claim?.metadata?.deletionTimestamp) && (claim.metadata.finalizers ?? []).includes(PVC_PROTECTION);
}

/** the claims a Pod that has not finished mounts */
function claimsOf(pod: any): string[] {
  if (pod?.status?.phase === "Succeeded" || pod?.status?.phase === "Failed") return [];
  const volumes: any[] = Array.isArray(pod?.spec?.volumes) ? pod.spec.volumes : [];
  return volumes.flatMap((v) => (v?.persistentVolumeClaim?.claimName ? [v.persistentVolumeClaim.claimName]
    : v?.ephemeral ? [`${pod.metadata?.name}-${v.name}`] : []));
}
