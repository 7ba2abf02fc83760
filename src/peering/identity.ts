// Who we are in the peering object. Readable on purpose: a person looking at
// `kubectl get kobunpeering default -o yaml` should see which pod or whose laptop it is.

// node:os is loaded when an id is made (peering): a standalone operator does not carry it.

let own: string | undefined;

/**
 * This process's peer id, stable for its lifetime (what a peering or lease made without a `run()`
 * uses): the first `newPeerId()`.
 */
export function peerId(): string {
  return (own ??= newPeerId());
}

/**
 * A peer id: `POD_ID` when set (the pod name via the downward API), else
 * `user@host/<start time>/<random>`, so two runs on one laptop, or two `run()`s in one process, differ.
 */
export function newPeerId(): string {
  const pod = process.env.POD_ID;
  if (pod) return pod;
  const stamp = new Date().toISOString().replace(/[-:T]/g, "").slice(0, 14);
  const random = Math.random().toString(36).slice(2, 5).padEnd(3, "0");
  return `${manualPeerId()}/${stamp}/${random}`;
}

/** The id of a person's manual record (`kobun freeze`): `user@host`, so `kobun resume` on the same machine finds it. */
export function manualPeerId(): string {
  return `${userName()}@${process.getBuiltinModule("node:os").hostname() || "localhost"}`;
}

function userName(): string {
  try {
    // In a FROM-scratch container there is no passwd entry, and userInfo() throws.
    return process.getBuiltinModule("node:os").userInfo().username || process.env.USER || "unknown";
  } catch {
    return process.env.USER || process.env.LOGNAME || "unknown";
  }
}
