// NDJSON line splitting for watch streams.
//
// A watch response is one JSON document per line, but the network cuts it anywhere:
// inside a line, inside a multi-byte UTF-8 character, or into one chunk holding many
// lines. `LineSplitter` turns arbitrary byte chunks into complete lines:
//   - bytes are decoded by one streaming TextDecoder, so a character split between two
//     chunks is completed by the next chunk instead of becoming U+FFFD;
//   - an unfinished line is kept as a list of string pieces and joined exactly once when
//     its newline arrives, so a several-MB object costs O(size), not O(size × chunks);
//   - only the new chunk is scanned for "\n", never the buffered part again.
// Empty lines (keep-alive newlines) are skipped; a trailing "\r" is dropped.
// A line may not grow past `maxLineBytes`: a server (or a proxy) that never sends "\n" would
// otherwise grow the buffer until the process dies. The splitter then drops what it holds
// and throws LineTooLongError, saying how much, never what.

/** A line grew past the limit without its newline; the splitter holds nothing of it any more. */
export class LineTooLongError extends Error {
  override readonly name = "LineTooLongError";
  constructor(
    readonly limit: number,
    /** Bytes of the unfinished line when the splitter gave up (at most limit + one chunk). */
    readonly bytes: number,
  ) {
    super(`a watch line grew past ${limit} bytes without a newline (${bytes} bytes held when dropped)`);
  }
}

export class LineSplitter {
  private readonly decoder = new TextDecoder("utf-8");
  private pieces: string[] = [];
  private buffered = 0;
  /** Bytes of the unfinished line (UTF-8 on the wire, as the limit is meant). */
  private pendingBytes = 0;

  constructor(private readonly maxLineBytes = Infinity) {}

  /** Characters held for the unfinished line (for limits and diagnostics). */
  get pendingLength(): number {
    return this.buffered;
  }

  /** Feeds one chunk; returns the lines it completed (possibly none). */
  push(chunk: Uint8Array): string[] {
    if (this.maxLineBytes !== Infinity) this.measure(chunk);
    return this.split(this.decoder.decode(chunk, { stream: true }));
  }

  /** Throws before decoding a chunk that would make a line longer than the limit. */
  private measure(chunk: Uint8Array): void {
    // 0x0A never occurs inside a multi-byte UTF-8 sequence: bytes can be counted undecoded.
    const first = chunk.indexOf(10);
    if (first === -1) {
      this.pendingBytes += chunk.byteLength;
      return this.check(this.pendingBytes);
    }
    this.check(this.pendingBytes + first);
    const last = chunk.lastIndexOf(10);
    // Lines between the first and the last newline are shorter than the chunk: only a chunk
    // longer than the limit (rare: the limit is megabytes) needs each of them measured.
    if (chunk.byteLength > this.maxLineBytes) {
      for (
        let start = first + 1, newline = chunk.indexOf(10, start);
        newline !== -1 && newline <= last;
        start = newline + 1, newline = chunk.indexOf(10, start)
      ) {
        this.check(newline - start);
      }
    }
    this.pendingBytes = chunk.byteLength - last - 1;
    this.check(this.pendingBytes);
  }

  private check(lineBytes: number): void {
    if (lineBytes <= this.maxLineBytes) return;
    this.pieces = [];
    this.buffered = 0;
    this.pendingBytes = 0;
    throw new LineTooLongError(this.maxLineBytes, lineBytes);
  }

  /** The stream ended: returns the last unterminated line, if any. */
  end(): string[] {
    const lines = this.split(this.decoder.decode());
    if (this.buffered > 0) {
      const last = this.takePending("");
      if (last) lines.push(last);
    }
    return lines;
  }

  private split(text: string): string[] {
    const lines: string[] = [];
    if (text.length === 0) return lines;
    let start = 0;
    let newline = text.indexOf("\n");
    while (newline !== -1) {
      const piece = text.slice(start, newline);
      const line = this.buffered > 0 ? this.takePending(piece) : trimCR(piece);
      if (line) lines.push(line);
      start = newline + 1;
      newline = text.indexOf("\n", start);
    }
    if (start < text.length) {
      const rest = start === 0 ? text : text.slice(start);
      this.pieces.push(rest);
      this.buffered += rest.length;
    }
    return lines;
  }

  private takePending(tail: string): string {
    this.pieces.push(tail);
    const line = this.pieces.length === 1 ? tail : this.pieces.join("");
    this.pieces = [];
    this.buffered = 0;
    return trimCR(line);
  }
}

function trimCR(line: string): string {
  return line.endsWith("\r") ? line.slice(0, -1) : line;
}
