// Test helpers for the sandbox suite: plain-fetch API calls and an NDJSON watch reader.

import type { Sandbox } from "../src/index.ts";

export interface ApiResult { status: number; body: any; headers: Headers }

export async function api(sb: Sandbox, method: string, path: string, body?: unknown, contentType = "application/json"): Promise<ApiResult> {
  const res = await fetch(sb.url + path, {
    method,
    headers: body === undefined ? {} : { "content-type": contentType },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: any = text;
  try { parsed = JSON.parse(text); } catch { /* not json */ }
  return { status: res.status, body: parsed, headers: res.headers };
}

export const cm = (name: string, labels: Record<string, string> = {}, data: Record<string, string> = { k: "v" }) =>
  ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, labels }, data });

export const CM = "/api/v1/namespaces/default/configmaps";

/** an open watch: read events one by one; `ended` tells whether the server closed the stream */
export class WatchReader {
  private buf = "";
  private lines: string[] = [];
  ended = false;
  errored: unknown;
  private readonly reader: { read(): Promise<{ done: boolean; value?: Uint8Array }> };
  private readonly dec = new TextDecoder();

  private constructor(readonly res: Response, readonly ac: AbortController) {
    this.reader = res.body!.getReader() as unknown as { read(): Promise<{ done: boolean; value?: Uint8Array }> };
  }

  static async open(sb: Sandbox, path: string, init: RequestInit = {}): Promise<WatchReader> {
    const ac = new AbortController();
    const res = await fetch(sb.url + path, { ...init, signal: ac.signal });
    return new WatchReader(res, ac);
  }

  /** the next raw line, or undefined when the stream ended */
  async nextLine(timeoutMs = 3000): Promise<string | undefined> {
    const deadline = Date.now() + timeoutMs;
    while (!this.lines.length) {
      if (this.ended) return undefined;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error("watch: no line in time");
      let timer: ReturnType<typeof setTimeout> | undefined;
      const r = await Promise.race([
        this.reader.read().then((x) => x, (e) => { this.errored = e; return { done: true, value: undefined }; }),
        new Promise<"timeout">((res) => { timer = setTimeout(() => res("timeout"), left); }),
      ]);
      clearTimeout(timer);
      if (r === "timeout") throw new Error("watch: no line in time");
      if (r.done) { this.ended = true; if (this.buf) { this.lines.push(this.buf); this.buf = ""; } continue; }
      this.buf += this.dec.decode(r.value, { stream: true });
      const parts = this.buf.split("\n");
      this.buf = parts.pop()!;
      this.lines.push(...parts.filter((p) => p.length));
    }
    return this.lines.shift();
  }

  async next(timeoutMs?: number): Promise<any> {
    const line = await this.nextLine(timeoutMs);
    return line === undefined ? undefined : JSON.parse(line);
  }

  /** skip BOOKMARKs */
  async nextChange(timeoutMs?: number): Promise<any> {
    for (;;) {
      const ev = await this.next(timeoutMs);
      if (!ev || ev.type !== "BOOKMARK") return ev;
    }
  }

  close(): void {
    this.ac.abort();
  }
}

export async function until(pred: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error("until: condition not met in time");
    await Bun.sleep(2);
  }
}
