// One WATCH stream (one socket): opens it, hands out complete NDJSON lines chunk by chunk,
// and closes the socket the moment it is told to, for whatever reason:
//   - the consumer's signal aborts (freeze, shutdown, `break` out of `for await`);
//   - no bytes at all arrived for `inactivityMs` while a read was pending (a half-dead
//     TCP connection or a stalled proxy: the server would never tell us);
//   - the watcher is done with it (410, ERROR, malformed line).
// Closing aborts the request's signal (the client closes the socket) and cancels the body
// reader too, so a pending `read()` settles at once instead of waiting for the next byte.
// (Named apart from kube/'s `Connection`, which is the credentials and TLS of a cluster.)
// Exactly one timer per stream, re-armed lazily rather than reset on every chunk.

import { linkedSignal } from "../util/index.ts";
import { LineSplitter } from "./lines.ts";
import type { WatchClient } from "./types.ts";

export class WatchStream {
  private readonly link: ReturnType<typeof linkedSignal>;
  private reader: { read(): Promise<{ done: boolean; value?: Uint8Array }>; cancel(): Promise<void> } | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** When the pending wait (for headers or a chunk) began; 0 while not waiting. */
  private waitingSince = 0;
  private closed = false;
  /** True when this stream was closed for lack of bytes. */
  inactive = false;
  /** Bytes received, for "was this stream ever useful" decisions and metrics. */
  bytes = 0;
  readonly openedAt = Date.now();

  constructor(
    private readonly client: WatchClient,
    private readonly inactivityMs: number,
    parent: AbortSignal,
    /** The longest line accepted (see LineSplitter). */
    private readonly maxLineBytes = Infinity,
  ) {
    this.link = linkedSignal(parent);
    this.link.signal.addEventListener("abort", () => this.cancelReader(), { once: true });
  }

  get signal(): AbortSignal {
    return this.link.signal;
  }

  /** Sends the request; resolves once the headers are in (non-2xx rejects with ApiError). */
  async open(path: string, query: Record<string, string>, accept?: string): Promise<void> {
    this.waitingSince = Date.now();
    this.arm(this.inactivityMs);
    try {
      const response = await this.client.stream(path, query, this.link.signal, {
        // Waiting for one of the process's connection slots (kube/budget.ts) is not the
        // server's silence: the idle clock starts when the request is sent.
        waitingForSlot: () => (this.waitingSince = 0),
        sending: () => (this.waitingSince = Date.now()),
      }, accept);
      if (!response.body) throw new Error(`watch ${path}: response without a body`);
      this.reader = response.body.getReader();
      if (this.closed) this.cancelReader();
    } finally {
      this.waitingSince = 0;
    }
  }

  /**
   * Complete lines, one batch per network chunk. Ends when the stream ends or is closed;
   * throws LineTooLongError when a line outgrows the limit (the caller closes the connection).
   */
  async *batches(): AsyncGenerator<string[]> {
    const reader = this.reader;
    if (!reader) return;
    const splitter = new LineSplitter(this.maxLineBytes);
    while (true) {
      this.waitingSince = Date.now();
      const { done, value } = await reader.read();
      this.waitingSince = 0;
      if (done || !value) break;
      this.bytes += value.byteLength;
      const lines = splitter.push(value);
      if (lines.length > 0) yield lines;
    }
    // A stream we cut ourselves ends mid-line; only a server's own end has a last line.
    if (!this.link.signal.aborted) {
      const rest = splitter.end();
      if (rest.length > 0) yield rest;
    }
  }

  /** Closes the socket (idempotent). No timer or listener survives this. */
  close(reason?: unknown): void {
    if (this.closed) return;
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.link.signal.aborted) {
      this.link.controller.abort(reason ?? new DOMException("watch connection closed", "AbortError"));
    }
    this.link.dispose();
    this.cancelReader();
  }

  private cancelReader(): void {
    this.reader?.cancel().catch(() => {});
  }

  // The idle clock runs only while we wait for the server: a slow consumer is not the
  // server's silence. The timer fires at the earliest moment the limit could be reached.
  private arm(ms: number): void {
    this.timer = setTimeout(() => this.check(), Math.max(1, ms));
  }

  private check(): void {
    this.timer = undefined;
    if (this.closed) return;
    const idle = this.waitingSince ? Date.now() - this.waitingSince : 0;
    if (idle >= this.inactivityMs) {
      this.inactive = true;
      this.close(new DOMException(`no bytes for ${this.inactivityMs} ms`, "TimeoutError"));
      return;
    }
    this.arm(this.inactivityMs - idle);
  }
}

