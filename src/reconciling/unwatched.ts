// An object the watch reports deleted while it lives on: it left resources.<key>.labelSelector
// or fieldSelector (the API server sends DELETED then). Its deletion will never be seen here,
// so kobun's finalizer on it is released, as when a delete handler stops matching; held, it
// would keep the object Terminating for ever once deleted.

import type { CyclePlan } from "../handling/index.ts";
import { hasFinalizer } from "./finalizer.ts";
import type { KubeObject } from "../kube/index.ts";
import type { Logger } from "../util/index.ts";

/** A plan that only removes kobun's finalizer. */
function releaseOnly(): CyclePlan {
  return {
    cause: "noop", user: undefined, results: {}, bookkeeping: { progress: new Map() }, finalizer: "remove",
    finalizerFirst: false, delay: undefined, runs: [], essence: undefined,
  };
}

/**
 * For a watch's deletion of `body`: when it still has kobun's finalizer and no deletionTimestamp,
 * sends `releaseOnly` through `write` (a 404: it was really gone); a failure is a warning saying what to do.
 */
export async function releaseIfUnwatched(
  body: KubeObject, write: (plan: CyclePlan) => Promise<KubeObject | "gone">, logger: Logger, stopped: () => boolean,
): Promise<void> {
  if (!hasFinalizer(body) || body.metadata.deletionTimestamp) return;
  const object = `${body.metadata.namespace ?? ""}/${body.metadata.name}`;
  try {
    if ((await write(releaseOnly())) !== "gone") {
      const message = "released the finalizer of an object that left the watch (its labelSelector or fieldSelector)";
      logger.info(message, { object });
    }
  } catch (error) {
    if (stopped()) return;
    const message =
      "could not release the finalizer of an object that left the watch: remove it by hand before deleting the object";
    logger.warn(message, { object, error });
  }
}
