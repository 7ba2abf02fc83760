// Metrics: counters, gauges and histograms with labels, exposed in the Prometheus text format
// (0.0.4) or OpenMetrics 1.0 when the scraper asks for it. Written here rather than taken from
// prom-client: the same families cost nothing measurable at start-up (see bench/metrics.ts and
// the README) and the room may import only util/.
//
// The hot path is `family.labels(...values)` once (kept by the caller) then `inc()`/`observe()`:
// a bound series is a plain object, so an update is one addition, no allocation.
// Never put unbounded values (object names, uids) in labels: each value is a series forever.

export type MetricType = "counter" | "gauge" | "histogram";

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** One series of a counter or gauge. */
export interface Series {
  inc(by?: number): void;
  set(value: number): void;
  readonly value: number;
}

/** One series of a histogram. */
export interface HistogramSeries {
  observe(value: number): void;
  readonly count: number;
  readonly sum: number;
}

abstract class Family<S> {
  /** Every series with its label values, in the order they were made (the exposition's order). */
  protected readonly series: { values: readonly string[]; series: S }[] = [];
  /** The series by label values, one Map level per label: a lookup builds no key string (a hot path's every request and handler run). */
  private readonly index = new Map<string, unknown>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: MetricType,
    readonly labelNames: readonly string[],
  ) {
    if (!NAME.test(name)) throw new Error(`metric name ${JSON.stringify(name)} is not a Prometheus name`);
    for (const label of labelNames) {
      if (!LABEL.test(label) || label.startsWith("__")) throw new Error(`metric ${name}: label ${JSON.stringify(label)} is not a Prometheus label name`);
    }
  }

  /** The series of these label values (in `labelNames` order), made on first use. */
  labels(...values: string[]): S {
    if (values.length !== this.labelNames.length) {
      throw new Error(`metric ${this.name} takes ${this.labelNames.length} label values (${this.labelNames.join(", ")}), got ${values.length}`);
    }
    let level = this.index;
    for (let i = 0; i < values.length - 1; i++) {
      let next = level.get(values[i]!) as Map<string, unknown> | undefined;
      if (!next) level.set(values[i]!, (next = new Map()));
      level = next;
    }
    const last = values.length ? values[values.length - 1]! : "";
    let series = level.get(last) as S | undefined;
    if (!series) {
      series = this.make();
      level.set(last, series);
      this.series.push({ values: [...values], series });
    }
    return series;
  }

  /** Forgets every series (a family whose label values went away, e.g. peers). */
  reset(): void {
    this.series.length = 0;
    this.index.clear();
  }

  protected abstract make(): S;
  /** Sample lines, without HELP/TYPE. */
  abstract lines(openMetrics: boolean): string[];

  protected labelText(values: readonly string[], extra?: string): string {
    const parts = values.map((v, i) => `${this.labelNames[i]}="${escapeLabel(v)}"`);
    if (extra) parts.push(extra);
    return parts.length ? `{${parts.join(",")}}` : "";
  }
}

class ValueSeries implements Series {
  value = 0;
  constructor(private readonly monotonic: boolean) {}
  inc(by = 1): void {
    if (this.monotonic && by < 0) throw new Error("a counter only goes up");
    this.value += by;
  }
  set(value: number): void {
    if (this.monotonic) throw new Error("a counter cannot be set");
    this.value = value;
  }
}

export class Counter extends Family<Series> {
  constructor(name: string, help: string, labelNames: readonly string[] = []) {
    super(name, help, "counter", labelNames);
    if (!name.endsWith("_total")) throw new Error(`counter ${name} must end in _total`);
  }
  protected make(): Series {
    return new ValueSeries(true);
  }
  /** Shorthand for a counter without labels, or `labels(...values).inc(by)`. */
  inc(values: readonly string[] = [], by = 1): void {
    this.labels(...values).inc(by);
  }
  lines(): string[] {
    return this.series.map(({ values, series }) => `${this.name}${this.labelText(values)} ${formatNumber(series.value)}`);
  }
}

export class Gauge extends Family<Series> {
  constructor(name: string, help: string, labelNames: readonly string[] = []) {
    super(name, help, "gauge", labelNames);
  }
  protected make(): Series {
    return new ValueSeries(false);
  }
  set(values: readonly string[], value: number): void {
    this.labels(...values).set(value);
  }
  lines(): string[] {
    return this.series.map(({ values, series }) => `${this.name}${this.labelText(values)} ${formatNumber(series.value)}`);
  }
}

class BucketSeries implements HistogramSeries {
  readonly counts: number[];
  count = 0;
  sum = 0;
  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Array<number>(bounds.length).fill(0);
  }
  observe(value: number): void {
    this.count++;
    this.sum += value;
    // Non-cumulative counts here; exposition accumulates them (an update touches one bucket).
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]!) {
        this.counts[i]!++;
        return;
      }
    }
  }
}

export class Histogram extends Family<HistogramSeries> {
  readonly buckets: readonly number[];
  constructor(name: string, help: string, buckets: readonly number[], labelNames: readonly string[] = []) {
    super(name, help, "histogram", labelNames);
    if (labelNames.includes("le")) throw new Error(`histogram ${name}: "le" is reserved`);
    if (buckets.length === 0 || buckets.some((b, i) => !Number.isFinite(b) || (i > 0 && b <= buckets[i - 1]!))) {
      throw new Error(`histogram ${name}: buckets must be finite and increasing`);
    }
    this.buckets = [...buckets];
  }
  protected make(): HistogramSeries {
    return new BucketSeries(this.buckets);
  }
  observe(values: readonly string[], value: number): void {
    this.labels(...values).observe(value);
  }
  lines(): string[] {
    const out: string[] = [];
    for (const { values, series } of this.series) {
      const s = series as BucketSeries;
      let cumulative = 0;
      this.buckets.forEach((bound, i) => {
        cumulative += s.counts[i]!;
        out.push(`${this.name}_bucket${this.labelText(values, `le="${formatNumber(bound)}"`)} ${cumulative}`);
      });
      out.push(`${this.name}_bucket${this.labelText(values, 'le="+Inf"')} ${s.count}`);
      out.push(`${this.name}_sum${this.labelText(values)} ${formatNumber(s.sum)}`);
      out.push(`${this.name}_count${this.labelText(values)} ${s.count}`);
    }
    return out;
  }
}

/** Values read at scrape time (process figures, sizes of live structures): no bookkeeping in between. */
class Collected extends Family<never> {
  constructor(name: string, help: string, type: "counter" | "gauge", labelNames: readonly string[], private readonly read: () => Iterable<[readonly string[], number]>) {
    super(name, help, type, labelNames);
  }
  protected make(): never {
    throw new Error(`metric ${this.name} is read at scrape time; it has no series to update`);
  }
  lines(): string[] {
    const out: string[] = [];
    for (const [values, value] of this.read()) out.push(`${this.name}${this.labelText(values)} ${formatNumber(value)}`);
    return out;
  }
}

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
  collect(name: string, help: string, type: "counter" | "gauge", labelNames: readonly string[], read: () => Iterable<[readonly string[], number]>): void {
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
      if (known.type !== family.type || known.constructor !== family.constructor || known.labelNames.join() !== family.labelNames.join()) {
        throw new Error(`metric ${family.name} is already registered as a ${known.type} with labels (${known.labelNames.join(", ")})`);
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
      out.push(`# HELP ${familyName} ${escapeHelp(family.help)}`, `# TYPE ${familyName} ${family.type}`, ...family.lines(openMetrics));
    }
    if (openMetrics) out.push("# EOF");
    return out.join("\n") + "\n";
  }
}

/** OpenMetrics when the Accept header asks for it (as Prometheus does by default), else text 0.0.4. */
export function wantsOpenMetrics(accept: string | null): boolean {
  return accept !== null && /application\/openmetrics-text/i.test(accept);
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

function escapeHelp(help: string): string {
  return help.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

function formatNumber(n: number): string {
  if (Number.isNaN(n)) return "NaN";
  if (n === Infinity) return "+Inf";
  if (n === -Infinity) return "-Inf";
  return String(n);
}
