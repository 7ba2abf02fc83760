// Request deadlines: every request (not a watch) gets a signal that aborts when it has had no
// complete answer for `ms`, or when the caller's signal aborts. One shared sweep timer serves
// all requests in flight (armed only while there are some, and never keeping the process
// alive), so the hot path pays for a Set entry, not a timer per request.

export interface Deadline {
  signal: AbortSignal;
  /** True when the deadline (not the caller) aborted the request. */
  readonly expired: boolean;
  end(): void;
}

export class Deadlines {
  private readonly inflight = new Map<AbortController, number>();
  private sweeper: ReturnType<typeof setInterval> | undefined;

  constructor(readonly ms: number) {}

  start(parent?: AbortSignal): Deadline {
    if (this.ms <= 0) return { signal: parent as AbortSignal, expired: false, end() {} }; // deadlines off
    const controller = new AbortController();
    const onAbort = () => controller.abort(parent!.reason);
    if (parent?.aborted) controller.abort(parent.reason);
    else parent?.addEventListener("abort", onAbort, { once: true });
    this.inflight.set(controller, performance.now() + this.ms);
    this.arm();
    return {
      signal: controller.signal,
      get expired() {
        return controller.signal.aborted && !parent?.aborted;
      },
      end: () => {
        parent?.removeEventListener("abort", onAbort);
        this.inflight.delete(controller);
        if (this.inflight.size === 0) this.disarm();
      },
    };
  }

  private arm(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => this.sweep(), Math.max(10, Math.min(1000, this.ms / 4)));
    this.sweeper.unref?.();
  }

  private disarm(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  private sweep(): void {
    const now = performance.now();
    for (const [controller, due] of this.inflight) {
      if (due > now) continue;
      this.inflight.delete(controller);
      controller.abort(new DOMException(`no complete answer within ${this.ms} ms`, "TimeoutError"));
    }
    if (this.inflight.size === 0) this.disarm();
  }
}
