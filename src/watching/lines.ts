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

export class LineSplitter {
  private readonly decoder = new TextDecoder("utf-8");
  private pieces: string[] = [];
  private buffered = 0;

  /** Characters held for the unfinished line (for limits and diagnostics). */
  get pendingLength(): number {
    return this.buffered;
  }

  /** Feeds one chunk; returns the lines it completed (possibly none). */
  push(chunk: Uint8Array): string[] {
    return this.split(this.decoder.decode(chunk, { stream: true }));
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
      const line = this.buffered > 0 ? this.takePending(text.slice(start, newline)) : trimCR(text.slice(start, newline));
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
