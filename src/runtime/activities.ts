// The operator's activities (`on.startup`, `on.cleanup`, `on.probe`): startup and cleanup run
// once, around the rest; probes are asked when /healthz is (cached).
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

const PROBE_TIMEOUT_MS = 5000;
const DEFAULT_CACHE_S = 10;

/**
 * The on.probe values for /healthz, each reused for its `cacheFor`: a probe that throws (or
 * takes longer than 5 s) reports `{ error }` instead, and never makes the operator unhealthy.
 */
export function probeValues(w: ActivityWiring): (() => Promise<Record<string, unknown>>) | undefined {
  const specs = w.registry.activities.filter((a) => a.kind === "probe");
  if (!specs.length) return undefined;
  const cache = new Map<ActivitySpec, { at: number; value: Promise<unknown> }>();
  const valueOf = (spec: ActivitySpec): Promise<unknown> => {
    const cached = cache.get(spec);
    if (cached && Date.now() - cached.at < (spec.options.cacheFor ?? DEFAULT_CACHE_S) * 1000) return cached.value;
    const signal = AbortSignal.timeout(PROBE_TIMEOUT_MS);
    const expired = new Promise<never>((_, reject) => signal.addEventListener("abort", () => reject(new Error(`no value within ${PROBE_TIMEOUT_MS} ms`)), { once: true }));
    const value = Promise.race([Promise.resolve().then(() => spec.fn(contextOf(spec, w, signal))), expired])
      .catch((error) => ({ error: error instanceof Error ? error.message : String(error) }));
    cache.set(spec, { at: Date.now(), value });
    return value;
  };
  return async () => Object.fromEntries(await Promise.all(specs.map(async (spec) => [spec.id, await valueOf(spec)] as const)));
}
