// NDJSON splitting: any chunk boundary, inside a line or inside a UTF-8 character, must
// give back exactly the lines that were sent; huge lines must cost linear time.

import { describe, expect, test } from "bun:test";
import { LineSplitter } from "../../src/watching/lines.ts";

const encoder = new TextEncoder();

function feed(chunks: Uint8Array[]): string[] {
  const splitter = new LineSplitter();
  const out: string[] = [];
  for (const chunk of chunks) out.push(...splitter.push(chunk));
  out.push(...splitter.end());
  return out;
}

function cut(bytes: Uint8Array, at: number[]): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  let start = 0;
  for (const p of at) {
    chunks.push(bytes.subarray(start, p));
    start = p;
  }
  chunks.push(bytes.subarray(start));
  return chunks;
}

describe("LineSplitter", () => {
  const lines = [
    JSON.stringify({ type: "ADDED", object: { metadata: { name: "plain" } } }),
    JSON.stringify({ type: "MODIFIED", object: { metadata: { name: "ünïcødé-ß-€-日本語-🎉🚀" } } }),
    JSON.stringify({ type: "BOOKMARK", object: { metadata: { resourceVersion: "42" } } }),
  ];
  const text = lines.join("\n") + "\n";
  const bytes = encoder.encode(text);

  test("a chunk boundary at every byte position (inside lines and inside multi-byte characters) gives the same lines", () => {
    for (let i = 0; i <= bytes.length; i++) {
      expect(feed(cut(bytes, [i]))).toEqual(lines);
    }
  });

  test("two boundaries at every pair of positions inside a 4-byte character give the same lines", () => {
    const emoji = text.indexOf("🎉");
    const byteAt = encoder.encode(text.slice(0, emoji)).length;
    for (let a = byteAt; a <= byteAt + 4; a++) {
      for (let b = a; b <= byteAt + 4; b++) expect(feed(cut(bytes, [a, b]))).toEqual(lines);
    }
  });

  test("one byte per chunk gives the same lines", () => {
    const chunks = Array.from(bytes, (_, i) => bytes.subarray(i, i + 1));
    expect(feed(chunks)).toEqual(lines);
  });

  test("many lines in one chunk all come out of that chunk", () => {
    const splitter = new LineSplitter();
    expect(splitter.push(bytes)).toEqual(lines);
    expect(splitter.pendingLength).toBe(0);
  });

  test("empty keep-alive lines are skipped and CRLF endings are trimmed", () => {
    expect(feed([encoder.encode('\n\n{"a":1}\r\n\r\n{"b":2}\n')])).toEqual(['{"a":1}', '{"b":2}']);
  });

  test("a last line without a newline is returned by end()", () => {
    const splitter = new LineSplitter();
    expect(splitter.push(encoder.encode('{"a":1}\n{"b"'))).toEqual(['{"a":1}']);
    expect(splitter.push(encoder.encode(":2}"))).toEqual([]);
    expect(splitter.end()).toEqual(['{"b":2}']);
  });

  // CPU time, not wall time: a loaded machine stretches the wall clock many times over (the
  // linear splitter took 6-15 s of wall at load 15 with 2 busy loops), never the CPU the work
  // itself needs. Linear: ~50-70 ms here; a flat buffer rescanned on each chunk: ~3 s.
  test("an 8 MB line in 4 KB chunks is reassembled intact in linear time (CPU time)", () => {
    const big = JSON.stringify({ type: "ADDED", object: { metadata: { name: "big" }, data: { blob: "é".repeat(4 * 1024 * 1024) } } });
    const data = encoder.encode(big + "\n" + lines[0] + "\n");
    const chunks: Uint8Array[] = [];
    for (let i = 0; i < data.length; i += 4 * 1024 + 1) chunks.push(data.subarray(i, i + 4 * 1024 + 1)); // odd size: splits "é"s
    const started = process.cpuUsage();
    const out = feed(chunks);
    const used = process.cpuUsage(started);
    expect(out.length).toBe(2);
    expect(out[0]!.length).toBe(big.length);
    expect(out[0] === big).toBe(true);
    expect(out[1]).toBe(lines[0]!);
    expect((used.user + used.system) / 1000).toBeLessThan(500);
  }, 60_000);
});
