// A bare HTTP server on 127.0.0.1 that speaks just enough of the API for one watcher of
// configmaps: every LIST answers an empty list at resourceVersion "1", and the n-th WATCH
// is answered by the n-th script (the last one repeats). For what the sandbox cannot do on
// purpose: a stream that never says anything, or a line that never ends.

import { KubeClient } from "../../src/kube/client.ts";

/** Writes the body of one watch response; `signal` aborts when the client goes away. */
export type WatchScript = (write: (chunk: string | Uint8Array) => Promise<void>, signal: AbortSignal) => Promise<void>;

export interface ScriptedServer {
  client: KubeClient;
  /** When each WATCH request arrived (performance.now()). */
  watchesAt: number[];
  /** The query of each WATCH request. */
  watchQueries: URLSearchParams[];
  /** Bytes written to each watch response so far. */
  bytesSent: number[];
  /** Resolves when the n-th (1-based) WATCH request has arrived. */
  watchArrived(n: number, timeoutMs: number): Promise<void>;
  stop(): Promise<void>;
}

export async function scriptedServer(scripts: WatchScript[]): Promise<ScriptedServer> {
  const watchesAt: number[] = [];
  const bytesSent: number[] = [];
  const watchQueries: URLSearchParams[] = [];
  const waiters: { n: number; resolve(): void }[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    fetch(req) {
      const url = new URL(req.url);
      if (url.searchParams.get("watch") !== "true") {
        return Response.json({ kind: "ConfigMapList", apiVersion: "v1", metadata: { resourceVersion: "1" }, items: [] });
      }
      if (url.searchParams.get("sendInitialEvents") === "true") {
        // Like a server without streaming lists: the watcher falls back to paged LISTs.
        return Response.json({ kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message: "sendInitialEvents is not supported", reason: "BadRequest", code: 400 }, { status: 400 });
      }
      const index = watchesAt.push(performance.now()) - 1;
      watchQueries.push(url.searchParams);
      bytesSent[index] = 0;
      for (const w of waiters.filter((w) => w.n <= watchesAt.length)) w.resolve();
      const script = scripts[Math.min(index, scripts.length - 1)]!;
      // Pulled, not pushed: the script's writes wait until the socket takes more, so the bytes
      // counted are bytes the client side read (or the kernel buffered), not a server queue.
      let controller!: ReadableStreamDefaultController<Uint8Array>;
      let wake: (() => void) | undefined;
      let gone = false;
      const body = new ReadableStream<Uint8Array>({
        start(c) { controller = c; },
        pull() { wake?.(); },
        cancel() { gone = true; wake?.(); },
      }, { highWaterMark: 0 });
      const encoder = new TextEncoder();
      const write = async (chunk: string | Uint8Array) => {
        if (gone || req.signal.aborted) throw new Error("the client went away");
        const bytes = typeof chunk === "string" ? encoder.encode(chunk) : chunk.slice();
        controller.enqueue(bytes);
        bytesSent[index]! += bytes.byteLength;
        if ((controller.desiredSize ?? 0) <= 0) await new Promise<void>((resolve) => { wake = resolve; });
        wake = undefined;
      };
      script(write, req.signal).catch(() => {}).finally(() => { try { controller.close(); } catch { /* cancelled */ } });
      return new Response(body, { headers: { "content-type": "application/json" } });
    },
  });
  const client = await KubeClient.connect({
    kubeconfigText: JSON.stringify({
      clusters: [{ name: "c", cluster: { server: `http://127.0.0.1:${server.port}` } }],
      users: [{ name: "u", user: {} }],
      contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
      "current-context": "x",
    }),
  });
  return {
    client,
    watchesAt,
    watchQueries,
    bytesSent,
    watchArrived(n, timeoutMs) {
      if (watchesAt.length >= n) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`watch request #${n} did not arrive within ${timeoutMs} ms (got ${watchesAt.length})`)), timeoutMs);
        waiters.push({ n, resolve: () => { clearTimeout(timer); resolve(); } });
      });
    },
    async stop() {
      client.close();
      await server.stop(true);
    },
  };
}

/** A stream that stays open and silent until the client leaves. */
export const silent: WatchScript = (_write, signal) =>
  new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
