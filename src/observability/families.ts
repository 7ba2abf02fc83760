// The kinds of metric (counter, gauge, histogram, and families read at scrape time) and their
// series: what the hot path touches. metrics.ts registers them and writes the exposition.
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

export abstract class Family<S> {
  /** Every series with its label values, in the order they were made (the exposition's order). */
  protected readonly series: { values: readonly string[]; series: S }[] = [];
  /**
   * The series by label values, one Map level per label: a lookup builds no key string (a hot path's
   * every request and handler run).
   */
  private readonly index = new Map<string, unknown>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: MetricType,
    readonly labelNames: readonly string[],
  ) {
    if (!NAME.test(name)) throw new Error(`metric name ${JSON.stringify(name)} is not a Prometheus name`);
    for (const label of labelNames) {
      if (!LABEL.test(label) || label.startsWith("__")) {
        throw new Error(`metric ${name}: label ${JSON.stringify(label)} is not a Prometheus label name`);
      }
    }
  }

  /** The series of these label values (in `labelNames` order), made on first use. */
  labels(...values: string[]): S {
    if (values.length !== this.labelNames.length) {
      const { name, labelNames } = this;
      throw new Error(
        `metric ${name} takes ${labelNames.length} label values (${labelNames.join(", ")}), got ${values.length}`,
      );
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

  /** One sample line: the name, the labels, the value. */
  protected sample(values: readonly string[], value: number): string {
    return `${this.name}${this.labelText(values)} ${formatNumber(value)}`;
  }

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
    return this.series.map(({ values, series }) => this.sample(values, series.value));
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
    return this.series.map(({ values, series }) => this.sample(values, series.value));
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
  lines(openMetrics: boolean): string[] {
    const out: string[] = [];
    const les = this.buckets.map((bound) => `le="${formatBound(bound, openMetrics)}"`);
    for (const { values, series } of this.series) {
      const s = series as BucketSeries;
      let cumulative = 0;
      this.buckets.forEach((_, i) => {
        cumulative += s.counts[i]!;
        out.push(`${this.name}_bucket${this.labelText(values, les[i])} ${cumulative}`);
      });
      out.push(`${this.name}_bucket${this.labelText(values, 'le="+Inf"')} ${s.count}`);
      out.push(`${this.name}_sum${this.labelText(values)} ${formatNumber(s.sum)}`);
      out.push(`${this.name}_count${this.labelText(values)} ${s.count}`);
    }
    return out;
  }
}

/** What a collected family's `read` returns at a scrape: label values (in `labelNames` order) and a value. */
export type Samples = Iterable<[readonly string[], number]>;

/** Values read at scrape time (process figures, sizes of live structures): no bookkeeping in between. */
export class Collected extends Family<never> {
  constructor(
    name: string, help: string, type: "counter" | "gauge", labelNames: readonly string[],
    private readonly read: () => Samples,
  ) {
    super(name, help, type, labelNames);
  }
  protected make(): never {
    throw new Error(`metric ${this.name} is read at scrape time; it has no series to update`);
  }
  lines(): string[] {
    const out: string[] = [];
    for (const [values, value] of this.read()) out.push(this.sample(values, value));
    return out;
  }
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

/**
 * A bucket's `le` as client_golang writes it (Go's shortest %g: "1e-08", "0.0001", "1e+06"; OpenMetrics
 * adds ".0" to a whole number): the label values controller-runtime's series carry, which a query
 * naming one `le` matches on a scraper that stores them as exposed (Prometheus 3 normalises them).
 */
function formatBound(n: number, openMetrics: boolean): string {
  const [mantissa, exponent] = n.toExponential().split("e") as [string, string];
  const exp = Number(exponent);
  const go = exp < -4 || exp >= 6
    ? `${mantissa}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`
    : String(n);
  return openMetrics && !/[e.]/.test(go) ? `${go}.0` : go;
}

function formatNumber(n: number): string {
  if (Number.isNaN(n)) return "NaN";
  if (n === Infinity) return "+Inf";
  if (n === -Infinity) return "-Inf";
  return String(n);
}
