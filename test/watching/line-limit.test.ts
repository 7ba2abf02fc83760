// A watch line may not grow without bound (issue 11, defect 10c: a server sending 400 MB
// without "\n" took the process to 505 MB). Past watching.lineLimit bytes the splitter drops
// what it holds, the watcher ends with a WatchError, and the operator's stream reports it on
// /healthz and in the log and starts afresh with backoff; memory stays at the limit.

import { afterEach, expect, test } from "bun:test";
import { ConfigError, resolveSettings } from "../../src/config/index.ts";
import { Health } from "../../src/observability/health.ts";
import { runResourceStream } from "../../src/streams/resource-stream.ts";
import { streamTimings } from "../../src/runtime/stream-wiring.ts";
import { Toggle } from "../../src/util/toggle.ts";
import { LineSplitter, LineTooLongError } from "../../src/watching/lines.ts";
import { WatchError } from "../../src/watching/errors.ts";
import { Watcher } from "../../src/watching/watcher.ts";
import type { WatchEvent } from "../../src/watching/types.ts";
import { Collector, configmaps, testLogger } from "./helpers.ts";
import { scriptedServer, silent, type ScriptedServer, type WatchScript } from "./scripted-server.ts";

const MiB = 1024 * 1024;
const CHUNK = 64 * 1024;
const bytes = (text: string) => new TextEncoder().encode(text);

/** Sends "x" without a newline, 64 KiB at a time, until the client leaves (or 256 MiB). */
const endless: WatchScript = async (write, signal) => {
  const chunk = new Uint8Array(CHUNK).fill(0x78);
  for (let sent = 0; !signal.aborted && sent < 256 * MiB; sent += CHUNK) await write(chunk);
};

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

test("the splitter accepts a line of exactly the limit and drops one a byte longer, across chunks", () => {
  const fits = new LineSplitter(10);
  expect(fits.push(bytes("0123"))).toEqual([]);
  expect(fits.push(bytes("456789\nab"))).toEqual(["0123456789"]);
  expect(fits.push(bytes("cdefghij\n"))).toEqual(["abcdefghij"]); // the count restarts after "\n"

  const over = new LineSplitter(10);
  over.push(bytes("01234"));
  const error = (() => {
    try {
      over.push(bytes("56789A"));
    } catch (e) {
      return e;
    }
  })();
  expect(error).toBeInstanceOf(LineTooLongError);
  expect(error).toMatchObject({ limit: 10, bytes: 11 });
  expect(over.pendingLength).toBe(0); // nothing of the line is held any more
  expect((error as Error).message).not.toContain("0123");
});

test("the limit counts UTF-8 bytes, not characters, and a complete line inside one chunk counts too", () => {
  const splitter = new LineSplitter(8);
  expect(splitter.push(bytes("ééé\n"))).toEqual(["ééé"]); // 6 bytes
  expect(() => splitter.push(bytes("éééé\n"))).not.toThrow(); // 8 bytes: exactly the limit
  expect(() => splitter.push(bytes("ok\néééé!\n"))).toThrow(LineTooLongError); // 9 bytes
});

test("a watch line without a newline ends the watcher at the limit, holding at most the limit plus the chunk that crossed it", async () => {
  server = await scriptedServer([endless]);
  const watcher = new Watcher(server.client, configmaps, { namespace: "default", streamingList: "never", maxLineBytes: MiB });
  const c = new Collector(watcher);
  await c.done; // ends on its own: no abort needed
  expect(c.error).toBeInstanceOf(WatchError);
  const error = c.error as WatchError;
  expect(error.message).toContain(`grew past ${MiB} bytes without a newline`);
  expect(error.message).toContain("watching.lineLimit");
  const cause = error.cause as LineTooLongError;
  expect(cause).toBeInstanceOf(LineTooLongError);
  expect(cause.bytes).toBeGreaterThan(MiB);
  expect(cause.bytes).toBeLessThan(2 * MiB); // the limit plus the one chunk that crossed it
  // The socket is closed: the server stops long before its 256 MiB (socket buffers aside).
  await server.watchArrived(1, 1000);
  expect(server.bytesSent[0]!).toBeLessThan(64 * MiB);
});

test("the operator's stream reports an over-long line on /healthz and in the log, then restarts with backoff and goes on", async () => {
  const event = JSON.stringify({ type: "ADDED", object: { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "after", namespace: "default", uid: "u1", resourceVersion: "2" } } });
  server = await scriptedServer([
    endless,
    async (write, signal) => {
      await write(`${event}\n`);
      await silent(write, signal);
    },
  ]);
  const settings = resolveSettings({ fileData: { watching: { lineLimit: MiB, backoff: { initial: 0.2, max: 1 } } } });
  const health = new Health();
  const { logger, lines } = testLogger();
  const events: WatchEvent[] = [];
  const added = Promise.withResolvers<void>();
  const stop = new AbortController();
  let unhealthyBeforeRestart: string | undefined;
  const running = runResourceStream({
    client: server.client, resource: configmaps, namespace: "default", toggle: new Toggle(), timings: streamTimings(settings.watching), health, logger,
    deliver(e) {
      events.push(e);
      // The restart's relist has begun but not finished: what /healthz says meanwhile.
      if (e.type === "relist-start" && events.length > 1) unhealthyBeforeRestart = Object.values(health.report().problems).join("; ");
      if (e.type === "added") added.resolve();
    },
  }, stop.signal);
  try {
    await server.watchArrived(2, 10_000);
    await Promise.race([added.promise, Bun.sleep(10_000).then(() => Promise.reject(new Error(`no ADDED after the restart: ${events.map((e) => e.type)} ${lines.join("\n")}`)))]);
  } finally {
    stop.abort();
    await running;
  }
  expect(unhealthyBeforeRestart).toContain(`grew past ${MiB} bytes without a newline`);
  expect(health.report().healthy).toBe(true); // the restarted stream's relist cleared it
  const logged = lines.find((l) => l.includes("watching failed; restarting"));
  expect(logged).toContain(`grew past ${MiB} bytes`);
  expect(logged).not.toContain("xxxx");
  expect(server.watchesAt[1]! - server.watchesAt[0]!).toBeGreaterThanOrEqual(100); // backoff 0.2 s, jitter ±50 %
  expect(server.watchQueries[1]!.get("resourceVersion")).toBe("1"); // a fresh LIST, then the watch from it
  expect(events.map((e) => e.type)).toEqual(["relist-start", "relist-done", "relist-start", "relist-done", "added"]);
}, 30_000);

test("watching.lineLimit is validated: at least 1 MiB, at most 1 GiB, an integer", () => {
  expect(resolveSettings({}).watching.lineLimit).toBe(8 * MiB);
  for (const bad of [0, 1000, MiB + 0.5, 2 * 1024 * MiB, "8Mi", -1]) {
    expect(() => resolveSettings({ fileData: { watching: { lineLimit: bad } } })).toThrow(ConfigError);
  }
  expect(() => resolveSettings({ fileData: { watching: { lineLimit: 512 } } })).toThrow(/watching\.lineLimit.*an integer from 1048576 to 1073741824/s);
});
