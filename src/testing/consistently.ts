// `consistently`: an object's state holds a condition for a whole window of real time (Gomega's
// Consistently, envtest's companion of Eventually). Every state the watch delivers within the
// window is tested, the first LIST's included: one false (or a throw) fails at once, naming the
// state; the window's end resolves with the last state seen. Nothing is polled: between changes
// there is nothing new to test.

import type { KubeObject } from "../kube/index.ts";
import { describe, show, statesOf, throwIfStopped, type Watched } from "./until.ts";

export class ConsistentlyError extends Error {
  override readonly name = "ConsistentlyError";
  constructor(
    message: string,
    /** The state that failed the condition (undefined: the object was absent). */
    readonly state: KubeObject | undefined,
  ) {
    super(message);
  }
}

export interface Held extends Watched {
  test(object: KubeObject | undefined): unknown;
  /** The window, in ms, from the call. */
  forMs: number;
  /** How long the first LIST may take (the kit's timeout): the first state is always tested. */
  timeoutMs: number;
}

/** Resolves with the last state seen once `forMs` passed with `test` true-ish on every state. */
export async function holdObject(h: Held): Promise<KubeObject | undefined> {
  const started = performance.now();
  const windowEnd = new AbortController();
  let tested = false;
  let windowOver = false;
  // The window ends the watch only once the first state was tested: a slow first LIST on a loaded
  // machine must not turn into a pass that tested nothing.
  const timer = setTimeout(() => {
    windowOver = true;
    if (tested) windowEnd.abort();
  }, h.forMs);
  const firstRead = AbortSignal.timeout(h.forMs + h.timeoutMs);
  const signal = AbortSignal.any([h.signal, windowEnd.signal, firstRead]);
  let last: KubeObject | undefined;
  try {
    for await (const state of statesOf(h, signal)) {
      last = state;
      check(h, state, started);
      tested = true;
      if (windowOver) break;
    }
  } catch (error) {
    if (!signal.aborted) throw error;
  } finally {
    clearTimeout(timer);
  }
  throwIfStopped(h, "consistently");
  if (!tested) throw new Error(`consistently ${describe(h)}: the object could not be read within ${h.timeoutMs} ms`);
  return last;
}

function check(h: Held, state: KubeObject | undefined, started: number): void {
  const at = Math.round(performance.now() - started);
  let holds: unknown;
  try {
    holds = h.test(state);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new ConsistentlyError(
      `consistently ${describe(h)}: the condition threw after ${at} ms of ${h.forMs} (${why}); state: ${show(state)}`,
      state,
    );
  }
  if (!holds) {
    throw new ConsistentlyError(
      `consistently ${describe(h)}: false after ${at} ms of ${h.forMs}; state: ${show(state)}`, state,
    );
  }
}
