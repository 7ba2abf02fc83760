// watching.clientTimeout 0 (the watcher's default) is derived from the server timeout: a
// stream that stays silent past the longest timeoutSeconds it asked for, plus a margin, is
// dead and re-watched (issue 11, defect 10b: it used to be a fixed 90 s).

import { afterEach, expect, test } from "bun:test";
import { Watcher } from "../../src/watching/watcher.ts";
import { derivedInactivityTimeoutMs } from "../../src/watching/options.ts";
import { resolveSettings } from "../../src/config/index.ts";
import { Collector, configmaps } from "./helpers.ts";
import { scriptedServer, silent, type ScriptedServer } from "./scripted-server.ts";

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

test("the derived client timeout is the longest jittered server timeout plus 5 s", () => {
  expect(derivedInactivityTimeoutMs(300)).toBe(335_000);
  expect(derivedInactivityTimeoutMs(60)).toBe(71_000);
  expect(derivedInactivityTimeoutMs(1)).toBe(6_000);
  expect(resolveSettings({}).watching.clientTimeout).toBe(0);
});

test("with no client timeout given, a watch silent past serverTimeout + 10 % + 5 s is dropped and re-watched", async () => {
  server = await scriptedServer([silent]);
  const watcher = new Watcher(server.client, configmaps, { namespace: "default", streamingList: "never", serverTimeoutSeconds: 1 });
  const c = new Collector(watcher);
  try {
    await server.watchArrived(1, 5_000);
    await server.watchArrived(2, 6_000 + 8_000); // derived 6 s, plus slack for a loaded machine
    const silence = server.watchesAt[1]! - server.watchesAt[0]!;
    expect(silence).toBeGreaterThanOrEqual(6_000 - 50);
    expect(server.watchQueries[1]!.get("resourceVersion")).toBe("1"); // resumed, not relisted
    expect(server.watchQueries[0]!.get("timeoutSeconds")).toBe("1");
  } finally {
    await c.stop();
  }
  expect(c.error).toBeUndefined();
}, 20_000);
