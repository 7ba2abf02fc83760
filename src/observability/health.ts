// Health and metrics state that every room may report into and the probe server reads.
// A watcher that fails is marked unhealthy here until it recovers, so /healthz tells the
// truth instead of the process looking alive while nothing is watched.
//
// A problem belongs to a component (`component(name, signal)`): the component's signal is
// the life of whatever reports it (a stream, a namespace's scope), and its abort releases the
// problem. So a namespace that is deleted takes its watch's 403 with it, and /healthz never
// keeps a pod failing its liveness probe for a component that no longer exists.

/** One reporter of at most one problem, cleared when it recovers or when its life ends. */
export interface HealthComponent {
  readonly name: string;
  /** Reports (or replaces) this component's problem; a no-op once released. */
  fail(problem: string): void;
  /** The component recovered. */
  clear(): void;
}

export class Health {
  /** By component name; each entry remembers its owner so that a successor keeps its own. */
  private readonly problems = new Map<string, { owner: HealthComponent; problem: string }>();
  private readonly counters = new Map<string, number>();
  private readonly gauges = new Map<string, () => number>();

  /**
   * A component whose problem lives at most as long as `life`: its abort clears it. A newer
   * component of the same name (a namespace deleted and re-created) takes the name over; the
   * older one's release then leaves the newer one's problem alone.
   */
  component(name: string, life: AbortSignal): HealthComponent {
    let released = life.aborted;
    const problems = this.problems;
    const component: HealthComponent = {
      name,
      fail(problem) {
        if (!released) problems.set(name, { owner: component, problem });
      },
      clear() {
        if (problems.get(name)?.owner === component) problems.delete(name);
      },
    };
    if (!released) {
      life.addEventListener("abort", () => {
        released = true;
        component.clear();
      }, { once: true });
    }
    return component;
  }

  get healthy(): boolean {
    return this.problems.size === 0;
  }

  report(): { healthy: boolean; problems: Record<string, string> } {
    return { healthy: this.healthy, problems: Object.fromEntries([...this.problems].map(([name, p]) => [name, p.problem])) };
  }

  /** Adds to a counter; `name` is a Prometheus metric name, optionally with `{labels}`. */
  count(name: string, by = 1): void {
    this.counters.set(name, (this.counters.get(name) ?? 0) + by);
  }

  gauge(name: string, read: () => number): void {
    this.gauges.set(name, read);
  }

  /** The Prometheus text exposition of every counter and gauge. */
  metrics(): string {
    const lines: string[] = [];
    const typed = new Set<string>();
    const emit = (name: string, type: string, value: number) => {
      const base = name.replace(/\{.*$/, "");
      if (!typed.has(base)) {
        typed.add(base);
        lines.push(`# TYPE ${base} ${type}`);
      }
      lines.push(`${name} ${value}`);
    };
    for (const [name, value] of [...this.counters].sort()) emit(name, "counter", value);
    for (const [name, read] of [...this.gauges].sort()) emit(name, "gauge", read());
    emit("kobun_healthy", "gauge", this.healthy ? 1 : 0);
    return lines.join("\n") + "\n";
  }
}
