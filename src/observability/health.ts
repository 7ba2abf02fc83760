// Health and metrics state that every room may report into and the probe server reads.
// A watcher that fails is marked unhealthy here until it recovers, so /healthz tells the
// truth instead of the process looking alive while nothing is watched.

export class Health {
  private readonly problems = new Map<string, string>();
  private readonly counters = new Map<string, number>();
  private readonly gauges = new Map<string, () => number>();

  setProblem(component: string, problem: string): void {
    this.problems.set(component, problem);
  }

  clearProblem(component: string): void {
    this.problems.delete(component);
  }

  get healthy(): boolean {
    return this.problems.size === 0;
  }

  report(): { healthy: boolean; problems: Record<string, string> } {
    return { healthy: this.healthy, problems: Object.fromEntries(this.problems) };
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
