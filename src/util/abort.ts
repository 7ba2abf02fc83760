// Small helpers that make every wait abortable: no await in kobun may wait on
// something that a signal cannot end.

/** setTimeout's limit (2^31-1 ms, ~24.8 days): a longer delay fires after 1 ms, with a TimeoutOverflowWarning. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/**
 * Calls `fire` after `ms`, however long (a requeueAfter of 30 days, a timer's monthly interval): a
 * delay past setTimeout's limit is waited in steps of at most that. Returns the cancel.
 */
export function longTimeout(ms: number, fire: () => void): () => void {
  const until = performance.now() + ms;
  let timer: ReturnType<typeof setTimeout>;
  const arm = (left: number) => {
    timer = setTimeout(() => {
      const rest = until - performance.now();
      if (rest > 0 && left > MAX_TIMEOUT_MS) arm(rest);
      else fire();
    }, Math.min(MAX_TIMEOUT_MS, Math.max(0, left)));
  };
  arm(ms);
  return () => clearTimeout(timer);
}

/** A signal that aborts once `promise` settles (a loop kept going until something ends: its waits cut short). */
export function settledSignal(promise: Promise<unknown>): AbortSignal {
  const settled = new AbortController();
  void promise.finally(() => settled.abort()).catch(() => {});
  return settled.signal;
}

/** Resolves true after `ms`, or false as soon as `signal` aborts. Never rejects. */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const cancel = longTimeout(ms, () => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    });
    const onAbort = () => {
      cancel();
      resolve(false);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Resolves when the signal aborts (immediately if it already has). */
export function aborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
}

/**
 * Calls `fn` once when `signal` aborts (check `aborted` first: an aborted signal fires no more);
 * the returned call forgets it. Many short-lived links
 * share one native listener per signal and a Set: the native list is scanned on every add and
 * remove, which cost O(links) per request with a few hundred cycles linked to one worker signal.
 */
export function onAbort(signal: AbortSignal, fn: () => void): () => void {
  let callbacks = fanOuts.get(signal);
  if (!callbacks) {
    const registered = new Set<() => void>();
    fanOuts.set(signal, registered);
    signal.addEventListener("abort", () => {
      fanOuts.delete(signal);
      for (const callback of registered) callback();
      registered.clear();
    }, { once: true });
    callbacks = registered;
  }
  const own = callbacks;
  own.add(fn);
  return () => void own.delete(fn);
}

const fanOuts = new WeakMap<AbortSignal, Set<() => void>>();

/**
 * A signal that aborts when any of the given ones does. Unlike `AbortSignal.any` (whose
 * dependents of a long-lived signal are never collected in Bun 1.4.5: ~1 KB each), the links
 * are removed by `dispose()`, so long-lived parents do not collect garbage from many
 * short-lived children (one per watch connection, one per handler call).
 */
export function linkedSignal(
  ...parents: (AbortSignal | undefined)[]
): { signal: AbortSignal; controller: AbortController; dispose(): void } {
  const controller = new AbortController();
  // Plain loops, no intermediate arrays: one link is made per handler cycle and per write.
  for (const p of parents) {
    if (p?.aborted) {
      controller.abort(p.reason);
      return { signal: controller.signal, controller, dispose: noop };
    }
  }
  const forgets: (() => void)[] = [];
  const dispose = () => {
    for (const forget of forgets) forget();
  };
  for (const p of parents) {
    if (p) forgets.push(onAbort(p, () => {
      dispose();
      controller.abort(p.reason);
    }));
  }
  return { signal: controller.signal, controller, dispose };
}

const noop = () => {};

/**
 * The signal that aborts when `a` or `b` does, one per pair while both live: every write under
 * the same hard signal and freeze gate shares it (and with it a request deadline's slot), instead
 * of linking one of its own per write. Nothing to dispose: the link goes when the first of the
 * pair aborts, or with `b`. Only for pairs that stay the same across many calls (a fresh `b`
 * per call would leave a link on `a` each time), and never handed to handlers, whose own abort
 * listeners would then outlive their call.
 */
export function eitherSignal(a: AbortSignal, b: AbortSignal): AbortSignal {
  let byA = pairs.get(b);
  if (!byA) pairs.set(b, (byA = new WeakMap()));
  let either = byA.get(a);
  if (!either) byA.set(a, (either = linkedSignal(a, b).signal));
  return either;
}

const pairs = new WeakMap<AbortSignal, WeakMap<AbortSignal, AbortSignal>>();

export function isAbortError(error: unknown): boolean {
  return (
    error instanceof Error &&
    (error.name === "AbortError" || error.name === "TimeoutError" || (error as { code?: string }).code === "ABORT_ERR")
  );
}

/**
 * Waits for `promise` (kube/: credentials, a file read or an exec plugin of up to a minute), or rejects
 * with the signal's reason the moment it aborts. The load itself goes on: it is shared with
 * other requests and bounded by its own timeout.
 */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  const reason = () => signal.reason ?? new DOMException("The operation was aborted.", "AbortError");
  if (signal.aborted) return Promise.reject(reason());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(reason());
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}
