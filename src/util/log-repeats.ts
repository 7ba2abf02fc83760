// A sink that keeps a repeated line from flooding the log: the same line (level, message and
// every field; only the time differs) is written `limit` times per window, the rest are counted,
// and the next line written after the window ends is preceded by one summary: the line once
// more, with `repeated=K` (K lines left out). A timer retrying in a tight loop, or a thousand
// requests refused at once, then log a few lines per window rather than thousands.
// It keeps no timer: the summary waits for the log's next line (at most a second of sweeping
// late), or for flush() when the operator stops, so nothing is left running and no count lost.

import type { LogLevel, LogSink } from "./log.ts";

export interface RepeatLimit {
  /** Identical lines written per window; the rest are counted (default 5). */
  limit?: number;
  /** The window, ms (default 10 s). */
  windowMs?: number;
}

interface Seen {
  since: number;
  count: number;
  level: LogLevel;
}

/** Lines tracked at once: past this, new lines go through untracked (memory stays bounded). */
const MAX_TRACKED = 1000;
/** `2026-01-02T03:04:05.678Z ` (plain) and `{"time":"2026-01-02T03:04:05.678Z",` (json): the part that differs. */
const TIME_PREFIX = { plain: 25, json: 35 } as const;

/** `sink`, with identical lines beyond `limit` per window summarised (see the header). */
export function withoutRepeats(sink: LogSink, { limit = 5, windowMs = 10_000 }: RepeatLimit = {}): LogSink {
  const seen = new Map<string, Seen>();
  const prefix = TIME_PREFIX[sink.format];
  let sweepAt = 0;
  const summarise = (key: string, entry: Seen) => {
    const left = entry.count - limit;
    if (left <= 0) return;
    const time = new Date().toISOString();
    const line =
      sink.format === "json"
        ? `{"time":"${time}",${key.slice(0, -1)},"repeated":${left}}`
        : `${time} ${key} repeated=${left}`;
    sink.write(line, entry.level);
  };
  const sweep = (now: number) => {
    sweepAt = now + Math.min(windowMs, 1000);
    for (const [key, entry] of seen) {
      if (now - entry.since < windowMs) continue;
      seen.delete(key);
      summarise(key, entry);
    }
  };
  return {
    get level() {
      return sink.level;
    },
    set level(level: LogLevel) {
      sink.level = level;
    },
    format: sink.format,
    flush() {
      for (const [key, entry] of seen) summarise(key, entry);
      seen.clear();
    },
    write(line, level) {
      const now = Date.now();
      if (now >= sweepAt) sweep(now);
      const key = line.slice(prefix);
      let entry = seen.get(key);
      if (entry && now - entry.since >= windowMs) {
        seen.delete(key); // its window ended since the last sweep
        summarise(key, entry);
        entry = undefined;
      }
      if (!entry) {
        if (seen.size < MAX_TRACKED) seen.set(key, { since: now, count: 1, level });
        return sink.write(line, level);
      }
      if (++entry.count <= limit) sink.write(line, level);
    },
  };
}
