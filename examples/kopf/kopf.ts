// What the ports of Kopf's examples share, as Kopf's examples share ../crd.yaml and ../obj.yaml:
// the KopfExample resource, typed; the sample object; and a journal, the stand-in for what
// Kopf's examples print (their tests read the operator's output).

import { resource, type ObjectMeta } from "kobun";

export interface KopfExample {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: { duration?: string; field?: string; items?: string[]; lst?: unknown[]; [key: string]: unknown };
  status?: Record<string, any>;
}

/** kopfexamples.kopf.dev/v1 (crd.yaml beside this file). */
export const KopfExamples = resource<KopfExample>("kopfexamples.kopf.dev/v1");

/** Kopf's obj.yaml: a label, an annotation, and a spec with a duration, a field and two items. */
export function sampleObject(name = "kopf-example-1"): KopfExample & { metadata: { name: string } } {
  return {
    metadata: { name, labels: { somelabel: "somevalue" }, annotations: { someannotation: "somevalue" } },
    spec: { duration: "1m", field: "value", items: ["item1", "item2"] },
  };
}

/**
 * Lines the example's handlers write where Kopf's print, kept in order. A test awaits a line
 * with `until` (no polling: each push wakes the waiters). `kit.logs` (issue 33) will make it
 * unnecessary: the tests will then read the operator's own log lines.
 */
export class Journal {
  readonly lines: string[] = [];
  private waiters = new Set<() => void>();

  write(line: string): void {
    this.lines.push(line);
    for (const wake of this.waiters) wake();
  }

  /** How many lines are exactly `line`. */
  count(line: string): number {
    return this.lines.filter((l) => l === line).length;
  }

  /** Resolves once `condition(lines)` holds; fails after `timeout` ms, naming what it saw. */
  async until(condition: (lines: readonly string[]) => boolean, timeout = 10_000): Promise<readonly string[]> {
    const deadline = performance.now() + timeout;
    while (!condition(this.lines)) {
      const left = deadline - performance.now();
      if (left <= 0) throw new Error(`journal: not true after ${timeout} ms; lines: ${JSON.stringify(this.lines)}`);
      const { promise, resolve } = Promise.withResolvers<void>();
      const timer = setTimeout(resolve, left);
      this.waiters.add(resolve);
      await promise;
      clearTimeout(timer);
      this.waiters.delete(resolve);
    }
    return this.lines;
  }

  /** Resolves once `line` was written (at least `times` times). */
  has(line: string, times = 1, timeout?: number): Promise<readonly string[]> {
    return this.until((lines) => lines.filter((l) => l === line).length >= times, timeout);
  }

  clear(): void {
    this.lines.length = 0;
  }
}
