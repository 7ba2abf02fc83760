// Metrics: counters, gauges and histograms with labels, exposed in the Prometheus text format
// (0.0.4) or OpenMetrics 1.0 when the scraper asks for it. Written here rather than taken from
// prom-client: the same families cost nothing measurable at start-up (see bench/metrics.ts and
// the README) and the room may import only util/. The families and their series are families.ts;
// this file registers them and writes the exposition.

import { Collected, Counter, Family, Gauge, Histogram, type Samples } from "./families.ts";

export {
  Counter, Gauge, Histogram, type HistogramSeries, type MetricType, type Samples, type Series,
} from "./families.ts";

export const TEXT_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
export const OPENMETRICS_CONTENT_TYPE = "application/openmetrics-text; version=1.0.0; charset=utf-8";

export class MetricsRegistry {
  private readonly families = new Map<string, Family<unknown>>();

  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    return this.add(new Counter(name, help, labelNames));
  }
  gauge(name: string, help: string, labelNames: readonly string[] = []): Gauge {
    return this.add(new Gauge(name, help, labelNames));
  }
  histogram(name: string, help: string, buckets: readonly number[], labelNames: readonly string[] = []): Histogram {
    return this.add(new Histogram(name, help, buckets, labelNames));
  }
  /** A family whose samples `read` returns at every scrape (label values in `labelNames` order). */
  collect(
    name: string, help: string, type: "counter" | "gauge", labelNames: readonly string[], read: () => Samples,
  ): void {
    this.add(new Collected(name, help, type, labelNames, read));
  }

  /** The family of that name, if registered (e.g. to share one between rooms' observers). */
  get(name: string): Family<unknown> | undefined {
    return this.families.get(name);
  }

  /**
   * Registering a name twice with the same shape returns the first family (two observers of
   * one registry share it); a different shape is a programming error, said at once.
   */
  private add<F extends Family<unknown>>(family: F): F {
    const known = this.families.get(family.name);
    if (known) {
      const sameShape = known.type === family.type && known.constructor === family.constructor
        && known.labelNames.join() === family.labelNames.join();
      if (!sameShape) {
        const labels = known.labelNames.join(", ");
        throw new Error(`metric ${family.name} is already registered as a ${known.type} with labels (${labels})`);
      }
      return known as F;
    }
    this.families.set(family.name, family);
    return family;
  }

  /** The exposition of every family, sorted by name; OpenMetrics when `openMetrics`. */
  expose(openMetrics = false): string {
    const out: string[] = [];
    for (const family of [...this.families.values()].sort((a, b) => (a.name < b.name ? -1 : 1))) {
      // OpenMetrics names a counter's family without the `_total` of its samples.
      const familyName = openMetrics && family.type === "counter" ? family.name.replace(/_total$/, "") : family.name;
      out.push(`# HELP ${familyName} ${escapeHelp(family.help)}`, `# TYPE ${familyName} ${family.type}`);
      out.push(...family.lines(openMetrics));
    }
    if (openMetrics) out.push("# EOF");
    return out.join("\n") + "\n";
  }
}

/** OpenMetrics when the Accept header asks for it (as Prometheus does by default), else text 0.0.4. */
export function wantsOpenMetrics(accept: string | null): boolean {
  return accept !== null && /application\/openmetrics-text/i.test(accept);
}

function escapeHelp(help: string): string {
  return help.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}
