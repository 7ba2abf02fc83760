// Small helpers that make every wait abortable: no await in kobun may wait on
// something that a signal cannot end.

/** Resolves true after `ms`, or false as soon as `signal` aborts. Never rejects. */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, Math.max(0, ms));
    const onAbort = () => {
      clearTimeout(timer);
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
 * A signal that aborts when any of the given ones does. Unlike `AbortSignal.any`, the
 * listeners are removed by `dispose()`, so long-lived parents do not collect garbage
 * from many short-lived children (one per watch connection, one per handler call).
 */
export function linkedSignal(...parents: (AbortSignal | undefined)[]): { signal: AbortSignal; controller: AbortController; dispose(): void } {
  const controller = new AbortController();
  const live = parents.filter((p): p is AbortSignal => p !== undefined);
  const first = live.find((p) => p.aborted);
  if (first) {
    controller.abort(first.reason);
    return { signal: controller.signal, controller, dispose() {} };
  }
  const onAbort = (event: Event) => {
    controller.abort((event.target as AbortSignal).reason);
    dispose();
  };
  const dispose = () => {
    for (const p of live) p.removeEventListener("abort", onAbort);
  };
  for (const p of live) p.addEventListener("abort", onAbort, { once: true });
  return { signal: controller.signal, controller, dispose };
}

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
  if (signal.aborted) return Promise.reject(signal.reason ?? new DOMException("The operation was aborted.", "AbortError"));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason ?? new DOMException("The operation was aborted.", "AbortError"));
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
