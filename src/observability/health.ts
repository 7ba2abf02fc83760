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

import { MetricsRegistry } from "./metrics.ts";
import { registerProcessMetrics } from "./process.ts";
import { Readiness } from "./readiness.ts";

export class Health {
  /** By component name; each entry remembers its owner so that a successor keeps its own. */
  private readonly problems = new Map<string, { owner: HealthComponent; problem: string }>();

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

  /** Named values added to the /healthz report (the operator's on.probe handlers). */
  probes?: () => Promise<Record<string, unknown>>;

  report(): { healthy: boolean; problems: Record<string, string> } {
    const problems = Object.fromEntries([...this.problems].map(([name, p]) => [name, p.problem]));
    return { healthy: this.healthy, problems };
  }

  /** What /readyz reports. */
  readonly readiness = new Readiness();

  /** The operator's metrics, served at /metrics beside the health report. */
  readonly metrics = new MetricsRegistry();

  constructor() {
    registerProcessMetrics(this.metrics);
    this.metrics.collect("kobun_healthy", "1 when /healthz reports no problem.", "gauge", [], () => [
      [[], this.healthy ? 1 : 0],
    ]);
  }

  /** The Prometheus text exposition (OpenMetrics when `openMetrics`). */
  exposition(openMetrics = false): string {
    return this.metrics.expose(openMetrics);
  }
}
