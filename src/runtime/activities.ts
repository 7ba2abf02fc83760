// The operator's activities (`on.startup`, `on.cleanup`): run once, around the rest.
// Startup handlers run before any watch is opened, in registration order; the first failure
// stops the operator with exit code 6 (`startup`), naming the handler. Cleanup handlers run
// after the watchers and the handlers have stopped, bounded by the shutdown grace period; a
// failure there is logged, and the others still run. Both share `memo` with every handler
// (each object's memo starts as a shallow copy of it).

import type { Api, ApiClient } from "../handling/api.ts";
import type { ActivitySpec, Registry } from "../handling/registry.ts";
import type { ActivityContext } from "../handling/types.ts";
import type { Resource } from "../kube/types.ts";
import { linkedSignal } from "../util/abort.ts";
import type { Logger } from "../util/log.ts";
import { FatalError } from "./exits.ts";

export interface ActivityWiring {
  registry: Registry;
  logger: Logger;
  api: ApiClient;
  memo: Record<string, any>;
}

// ctx.api for code that handles no object: bound to a resource that matches nothing, so no
// write is ever folded into a handler's patch.
const NO_OBJECT: Resource = { group: "", version: "", plural: "", kind: "", namespaced: false, statusSubresource: false };

function contextOf(spec: ActivitySpec, w: ActivityWiring, signal: AbortSignal): ActivityContext {
  const api: Api = w.api.bind({ resource: NO_OBJECT, body: { metadata: {} } as never }, signal);
  return { memo: w.memo, logger: w.logger.child({ [spec.kind]: spec.id }), signal, api };
}

/** Runs the startup handlers in order; throws a FatalError (exit 6) at the first that fails. */
export async function runStartup(w: ActivityWiring, signal: AbortSignal): Promise<void> {
  for (const spec of w.registry.activities.filter((a) => a.kind === "startup")) {
    if (signal.aborted) return;
    try {
      await spec.fn(contextOf(spec, w, signal));
    } catch (error) {
      if (signal.aborted) return;
      const reason = error instanceof Error ? error.message : String(error);
      throw new FatalError("startup", `startup handler ${spec.id} failed: ${reason}`, { cause: error });
    }
  }
}

/** Runs the cleanup handlers in order within `graceMs`; failures are logged, never thrown. */
export async function runCleanup(w: ActivityWiring, graceMs: number): Promise<void> {
  const specs = w.registry.activities.filter((a) => a.kind === "cleanup");
  if (!specs.length) return;
  const deadline = linkedSignal(AbortSignal.timeout(graceMs));
  try {
    for (const spec of specs) {
      if (deadline.signal.aborted) {
        w.logger.warn("cleanup handler not run: the shutdown grace period is over", { cleanup: spec.id });
        continue;
      }
      const running = Promise.resolve().then(() => spec.fn(contextOf(spec, w, deadline.signal)));
      const expired = new Promise<"expired">((resolve) => deadline.signal.addEventListener("abort", () => resolve("expired"), { once: true }));
      try {
        if ((await Promise.race([running, expired])) === "expired") w.logger.warn("abandoned a cleanup handler past the shutdown grace period", { cleanup: spec.id });
      } catch (error) {
        w.logger.error("cleanup handler failed", { cleanup: spec.id, error });
      }
    }
  } finally {
    deadline.dispose();
  }
}
