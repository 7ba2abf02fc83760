// The standard `process_*` families (the names every Go and Node exporter uses, so the stock
// dashboards and alerts read them) and an event-loop lag histogram. Process figures are read
// at scrape time; the lag needs a clock tick, which runs only while `monitorEventLoop`'s
// signal is live (no timer outlives the operator). node:fs is loaded at the first scrape, not
// at start-up (it costs a compiled operator ≈ 2 MB of RSS).

import { sleep } from "../util/index.ts";
import type { MetricsRegistry, Samples } from "./metrics.ts";

/** Registers process_cpu_seconds_total, process_resident_memory_bytes, process_open_fds, ... */
export function registerProcessMetrics(registry: MetricsRegistry): void {
  const gauge = (name: string, help: string, read: () => Samples) => registry.collect(name, help, "gauge", [], read);
  const fs = () => process.getBuiltinModule("node:fs");
  const cpuHelp = "Total user and system CPU time spent in seconds.";
  registry.collect("process_cpu_seconds_total", cpuHelp, "counter", [], () => {
    const { user, system } = process.cpuUsage();
    return [[[], (user + system) / 1e6]];
  });
  gauge("process_resident_memory_bytes", "Resident memory size in bytes.", () => [[[], process.memoryUsage.rss()]]);
  gauge("process_heap_bytes", "JavaScript heap in use, in bytes.", () => [[[], process.memoryUsage().heapUsed]]);
  gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", () => [
    [[], START_TIME_S],
  ]);
  gauge("process_open_fds", "Number of open file descriptors.", () =>
    readable(() => [[[], fs().readdirSync("/proc/self/fd").length - 1]]),
  );
  gauge("process_max_fds", "Maximum number of open file descriptors.", () => readable(() => {
    const soft = /^Max open files\s+(\d+)/m.exec(fs().readFileSync("/proc/self/limits", "utf8"))?.[1];
    return soft ? [[[], Number(soft)]] : [];
  }));
  gauge("process_virtual_memory_bytes", "Virtual memory size in bytes.", () => readable(() => {
    const kib = /^VmSize:\s+(\d+)/m.exec(fs().readFileSync("/proc/self/status", "utf8"))?.[1];
    return kib ? [[[], Number(kib) * 1024]] : [];
  }));
}

/** performance.timeOrigin is when this process (its JS realm) started; fixed for its life. */
const START_TIME_S = Math.round(performance.timeOrigin) / 1000;

/** /proc exists on Linux only: elsewhere the family is exposed with no sample, not an error. */
function readable(read: () => Samples): Samples {
  try {
    return read();
  } catch {
    return [];
  }
}

/** Buckets from 1 ms (a busy loop) to 10 s (a loop blocked by a synchronous handler). */
export const LAG_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * Ticks every `intervalMs` until `signal` aborts, observing how late each tick fired into
 * `kobun_event_loop_lag_seconds`, and telling `onTick` the lateness. Lateness is the loop's own:
 * a timer fires only when the loop is free, so a tick due at T that runs at T+x saw the loop
 * blocked for about x.
 */
export function monitorEventLoop(
  registry: MetricsRegistry, signal: AbortSignal, onTick?: (lateSeconds: number) => void, intervalMs = 100,
): void {
  const help = "How late a periodic timer fired: time the event loop was blocked.";
  const lag = registry.histogram("kobun_event_loop_lag_seconds", help, LAG_BUCKETS).labels();
  void (async () => {
    while (!signal.aborted) {
      const due = performance.now() + intervalMs;
      await sleep(intervalMs, signal);
      if (signal.aborted) return;
      const late = Math.max(0, performance.now() - due) / 1000;
      lag.observe(late);
      onTick?.(late);
    }
  })();
}
