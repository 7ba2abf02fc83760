// Structured logging: one line per meaningful fact, as `key=value` text or JSON.
// Loggers are cheap children of a root sink, so every line carries its context
// (resource, object, handler) without string concatenation at call sites.
// Never pass tokens, keys or Secret data as fields: nothing here can tell them apart.

import { activeSpan } from "./trace.ts";

export type LogLevel = "debug" | "info" | "warn" | "error";
export type LogFormat = "plain" | "json";
export type LogFields = Record<string, unknown>;

const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** Where a Logger's lines go: its level (lines below it are not even formatted), format, and writer. */
export interface LogSink {
  level: LogLevel;
  format: LogFormat;
  write(line: string, level: LogLevel): void;
  /** Writes what the sink still holds back (log-repeats.ts' summaries); called when the operator stops. */
  flush?(): void;
}

/**
 * The operator's structured logger: `new Logger(sink)` is what `run({ logger })` takes; handlers get
 * children of it (`ctx.logger`) whose lines carry the object's fields.
 */
export class Logger {
  /** A child's context, merged with its parent's when first needed (a line, a grandchild). */
  private merged: LogFields | undefined;

  constructor(
    readonly sink: LogSink,
    private readonly own: LogFields = {},
    private readonly parent?: Logger,
  ) {
    if (!parent) this.merged = own;
  }

  /** The fields every line of this logger carries: its parents' and its own. */
  get context(): LogFields {
    return (this.merged ??= { ...this.parent!.context, ...this.own });
  }

  /**
   * A logger whose lines carry `fields` too. Made per handler call: the fields are merged
   * only when a line is written, so a level that is off costs no copy.
   */
  child(fields: LogFields): Logger {
    // A copy: the caller's object may change after (a handler's ctx.logger.child(f)).
    return new Logger(this.sink, { ...fields }, this);
  }

  enabled(level: LogLevel): boolean {
    return rank[level] >= rank[this.sink.level];
  }

  debug(msg: string, fields?: LogFields): void {
    if (this.enabled("debug")) this.emit("debug", msg, fields);
  }
  info(msg: string, fields?: LogFields): void {
    if (this.enabled("info")) this.emit("info", msg, fields);
  }
  warn(msg: string, fields?: LogFields): void {
    if (this.enabled("warn")) this.emit("warn", msg, fields);
  }
  error(msg: string, fields?: LogFields): void {
    if (this.enabled("error")) this.emit("error", msg, fields);
  }

  private emit(level: LogLevel, msg: string, fields?: LogFields): void {
    let all = fields ? { ...this.context, ...fields } : this.context;
    // Inside a traced cycle (tracing on, the trace sampled), its lines carry the trace id, to find the trace.
    const traceId = activeSpan()?.traceId;
    if (traceId) all = { ...all, trace_id: traceId };
    this.sink.write(formatLine(this.sink.format, level, msg, all), level);
  }
}

/**
 * One line. Never throws: a field JSON cannot hold (a bigint, a cycle, a toJSON that throws) is written as text,
 * so a log call cannot fail the handler that makes it.
 */
export function formatLine(format: LogFormat, level: LogLevel, msg: string, fields: LogFields): string {
  const time = new Date().toISOString();
  if (format === "json") {
    const record: LogFields = { time, level, msg, ...plainFields(fields) };
    const line = jsonOf(record);
    if (line !== undefined) return line;
    // Only on a field it could not write: each field that JSON cannot hold becomes its text.
    for (const [key, value] of Object.entries(record)) if (!jsonHolds(value)) record[key] = textOf(value);
    return jsonOf(record)!;
  }
  let line = `${time} ${level.toUpperCase().padEnd(5)} ${msg}`;
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    line += ` ${key}=${formatValue(value)}`;
  }
  return line;
}

function plainFields(fields: LogFields): LogFields {
  const out: LogFields = {};
  for (const [key, value] of Object.entries(fields)) {
    out[key] = value instanceof Error ? value.message : value;
  }
  return out;
}

function formatValue(value: unknown): string {
  const text = value instanceof Error ? value.message : typeof value === "string" ? value
    : typeof value === "bigint" ? String(value) : jsonOf(value) ?? textOf(value);
  return /^[\w./:@*+-]+$/.test(text) ? text : JSON.stringify(text);
}

/** `value` as JSON (bigints as their decimal text), or undefined when JSON cannot hold it. */
function jsonOf(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    try {
      // Rare: a bigint somewhere (the replacer, slower, only then), or a cycle (throws again).
      return JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? String(v) : v));
    } catch {
      return undefined;
    }
  }
}

/** Whether JSON.stringify can take `value` as a field (one it leaves out, a function's, counts as taken). */
function jsonHolds(value: unknown): boolean {
  return typeof value !== "object" || jsonOf(value) !== undefined;
}

/** `value` as text, whatever it is (a String() that throws too: its type). */
function textOf(value: unknown): string {
  try {
    return String(value);
  } catch {
    return `[${typeof value}]`;
  }
}

/**
 * A sink writing to stderr (so stdout stays free for command output such as manifests), each
 * line to the file descriptor before `write` returns (as Go's and Python's loggers do): Bun's
 * process.stderr buffers what a slow pipe does not take at once, and process.exit() drops that
 * buffer, so the operator's last lines were lost at exit. node:fs is loaded at the first line:
 * an operator that logs nothing (-q) does not carry it (≈ 2 MB of RSS in a compiled binary).
 */
export function stderrSink(level: LogLevel = "info", format: LogFormat = "plain"): LogSink {
  /** Once a line went to Bun's buffered stream, every later one does too: lines never overtake each other. */
  let buffered = false;
  return {
    level,
    format,
    write(line) {
      const bytes = Buffer.from(line + "\n");
      if (buffered) return void process.stderr.write(bytes);
      let at = 0;
      try {
        // A write interrupted by a signal may take part of it: the rest follows.
        const { writeSync } = process.getBuiltinModule("node:fs");
        while (at < bytes.length) at += writeSync(2, bytes, at);
      } catch {
        // A non-blocking (EAGAIN: something made stderr non-blocking) or closed stderr: Bun's
        // buffered stream is the best left, from here on.
        buffered = true;
        process.stderr.write(bytes.subarray(at));
      }
    },
  };
}

/** A sink that keeps lines in memory (every one, or the last `max`), and can be awaited for a line to come. */
export interface MemorySink extends LogSink {
  /** The lines so far (the last `max` of them when given), oldest first (formatted as the sink's `format` says). */
  readonly lines: string[];
  /**
   * Resolves with the first line, written already or to come, that matches `pattern` (a RegExp, or
   * a string the line contains). Rejects after `timeout` ms (default 5000) with the pattern and the
   * last lines, or at once with `signal`'s reason when it aborts.
   */
  until(pattern: RegExp | string, o?: { timeout?: number; signal?: AbortSignal }): Promise<string>;
}

/** How many lines a memory sink keeps. */
export interface MemorySinkOptions {
  /**
   * Keep only the last `max` lines (older ones dropped as new ones come). Unset: every line, as a
   * test wants; a long-running `run()` embedder gives one (say 1000), else memory grows with the log.
   */
  max?: number;
}

/**
 * A sink that keeps lines in memory: for tests (`kit.logs`) and for `run()` embedders that route
 * logs elsewhere: `run({ logger: new Logger(memorySink("info", "plain", { max: 1000 })) })`.
 */
export function memorySink(
  level: LogLevel = "debug", format: LogFormat = "plain", options: MemorySinkOptions = {},
): MemorySink {
  const { max } = options;
  if (max !== undefined && !(Number.isInteger(max) && max >= 1)) {
    throw new Error(`memorySink: max must be a whole number of lines ≥ 1 (got ${String(max)})`);
  }
  const lines: string[] = [];
  /** The pending `until`s: each is told every new line (and removes itself once it matched). */
  const waiting = new Set<(line: string) => void>();
  return {
    level, format, lines,
    write(line) {
      lines.push(line);
      if (max !== undefined && lines.length > max) lines.splice(0, lines.length - max);
      for (const heard of [...waiting]) heard(line);
    },
    until(pattern, o = {}) {
      const matches = typeof pattern === "string" ? (line: string) => line.includes(pattern) : (line: string) => {
        pattern.lastIndex = 0; // a /g or /y pattern keeps state between tests
        return pattern.test(line);
      };
      const found = lines.find(matches);
      if (found !== undefined) return Promise.resolve(found);
      const timeoutMs = o.timeout ?? 5000;
      return new Promise<string>((resolve, reject) => {
        const end = () => {
          clearTimeout(timer);
          o.signal?.removeEventListener("abort", stopped);
          waiting.delete(heard);
        };
        const heard = (line: string): void => {
          if (!matches(line)) return;
          end();
          resolve(line);
        };
        const stopped = () => (end(), reject(o.signal!.reason));
        const timer = setTimeout(() => {
          end();
          const recent = lines.slice(-5).map((line) => `\n  ${line}`).join("");
          reject(new Error(`logs.until(${String(pattern)}): no such line within ${timeoutMs} ms; ` +
            `${lines.length} lines, the last: ${recent || "(none)"}`));
        }, timeoutMs);
        if (o.signal?.aborted) return stopped();
        o.signal?.addEventListener("abort", stopped, { once: true });
        waiting.add(heard);
      });
    },
  };
}

/**
 * One sink writing to several, each from its own level (all in the first one's format): the test
 * kit keeps every line in memory while only warnings reach stderr.
 */
export function teeSink(...sinks: [LogSink, ...LogSink[]]): LogSink {
  const level = sinks.map((sink) => sink.level).reduce((a, b) => (rank[a] <= rank[b] ? a : b));
  return {
    level,
    format: sinks[0].format,
    write(line, at) {
      for (const sink of sinks) if (rank[at] >= rank[sink.level]) sink.write(line, at);
    },
    flush() {
      for (const sink of sinks) sink.flush?.();
    },
  };
}

export const silentLogger = new Logger({ level: "error", format: "plain", write() {} });
