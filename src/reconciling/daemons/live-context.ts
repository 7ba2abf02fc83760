// A daemon's context is live (Kopf's is): `body`, `spec`, `meta`, `status`, `labels` and
// `annotations` are read from the newest body the watch delivered each time they are read,
// not the body the daemon started with. A value read once is a snapshot: `const { spec } = ctx`
// (or destructuring it in the parameter list) keeps the spec of that moment.

import type { KubeObject } from "../../kube/index.ts";
import type { ObjectContext } from "../../declaring/index.ts";

const LIVE = ["body", "spec", "meta", "status", "labels", "annotations"] as const;

/**
 * Makes `ctx`'s object fields read through to `current()`; `viewOf` builds the fields of one body
 * as the handlers' contexts do, and is asked again only when the body changed.
 */
export function makeLive(
  ctx: ObjectContext, current: () => KubeObject, viewOf: (body: KubeObject) => ObjectContext,
): void {
  let seen = ctx.body;
  let view: ObjectContext = { ...ctx }; // the fields as they are now, before they become getters
  const fresh = (): ObjectContext => {
    const body = current();
    if (body !== seen) {
      seen = body;
      view = viewOf(body);
    }
    return view;
  };
  for (const key of LIVE) {
    Object.defineProperty(ctx, key, { get: () => fresh()[key], enumerable: true, configurable: true });
  }
}
