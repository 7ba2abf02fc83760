// on.startup retried as a handler is (issue 33, Kopf's 13-hooks): TemporaryError(delay) and other
// errors are retried with ctx.retry counting; the operator fails (exit 6) only when out of retries;
// activities get ctx.indexes (empty in startup, before any watch; filled for probes).

import { afterAll, beforeAll, expect, test } from "bun:test";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry, TemporaryError } from "../../src/declaring/index.ts";
import { FatalError } from "../../src/runtime/exits.ts";
import { run } from "../../src/runtime/operator.ts";
import { env, testLogger, type Env } from "../peering/helpers.ts";
import { eventually } from "../runtime/helpers.ts";

let e: Env;
beforeAll(async () => (e = await env()));
afterAll(() => e.stop());

const settings = (flags: Record<string, unknown> = {}) =>
  resolveSettings({ flags: { namespaces: ["default"], standalone: true, ...flags } });
// Watches of one resource that no other test here watches: an earlier operator's last requests do not count.
const watches = (plural: string) => e.sandbox.stats.log.filter((r) => r.query.includes("watch=") && r.plural === plural).length;

test("a startup handler that raises TemporaryError is retried after its delay, ctx.retry counting, and the operator starts (Kopf's 13-hooks)", async () => {
  const registry = new Registry();
  const seen: { retry: number; watches: number }[] = [];
  let first: Date | undefined;
  registry.on.startup(function startupRetried({ retry, started }) {
    seen.push({ retry, watches: watches("services") - before });
    first ??= started;
    expect(started).toBe(first); // the first attempt's time, on every attempt
    if (retry < 3) throw new TemporaryError(`going to succeed in ${3 - retry} attempts`, { delay: 0.02 });
  });
  registry.on.create("v1/services", () => {}, { id: "noop", labels: { scenario: "startup-retries" } });
  registry.on.cleanup(() => {}, { id: "farewell" });
  const { logger, lines } = testLogger();
  const before = watches("services");
  const stop = new AbortController();
  let started = false;
  const operator = run({ signal: stop.signal, client: e.client, registry, logger, settings: settings(), onStarted: () => (started = true) });
  try {
    await eventually(() => started, "the operator to start");
    expect(seen).toEqual([0, 1, 2, 3].map((retry) => ({ retry, watches: 0 })));
    await eventually(() => watches("services") > before, "the count to see the operator's watch"); // it can fail
    expect(lines.filter((l) => l.includes("startup handler failed; retrying"))).toHaveLength(3);
    expect(lines.find((l) => l.includes("Activity 'startupRetried' succeeded."))).toContain("startup=startupRetried");
  } finally {
    stop.abort();
    await operator;
  }
  expect(lines.filter((l) => l.includes("Activity 'farewell' succeeded."))).toHaveLength(1);
});

test("out of retries, a startup handler stops run() with exit code 6 before any watch; a plain error is retried as a handler's", async () => {
  const registry = new Registry();
  let attempts = 0;
  registry.on.startup(function flaky() {
    attempts++;
    throw new Error("still sealed");
  }, { retries: 3, backoff: 0.01 });
  registry.on.create("v1/secrets", () => {}, { id: "never" });
  const before = watches("secrets");
  const failure = await run({ client: e.client, registry, logger: testLogger().logger, settings: settings() }).catch((error) => error);
  expect(failure).toBeInstanceOf(FatalError);
  expect(failure.exitCode).toBe(6);
  expect(failure.message).toBe("startup handler flaky failed: handler flaky failed 3 time(s): still sealed");
  expect(attempts).toBe(3);
  expect(watches("secrets")).toBe(before);
});

test("retry options on an activity that is not retried are refused, naming them", () => {
  const registry = new Registry();
  expect(() => registry.on.cleanup(() => {}, { id: "bye", retries: 3 })).toThrow(
    "cleanup bye: retries: only on.startup is retried (and takes them)",
  );
  expect(() => registry.on.startup(() => {}, { id: "hi", retries: 0 })).toThrow("startup hi: retries must be a whole number ≥ 1 (attempts)");
  // Kopf's 13-hooks: @kopf.on.login(errors=kopf.ErrorsMode.PERMANENT) says what a login is here (never retried).
  expect(() => registry.on.login(() => undefined, { id: "in", errors: "permanent" })).not.toThrow();
  expect(() => registry.on.login(() => undefined, { id: "again", errors: "temporary" })).toThrow(
    "login again: errors: only on.startup is retried (and takes them)",
  );
});

test("activities get ctx.indexes: empty in on.startup (before any watch), filled for on.probe (Kopf's 16-indexing)", async () => {
  const registry = new Registry();
  registry.on.index("v1/configmaps", ({ name, labels }) => (labels.scenario === "indexed-probe" ? { [name]: true } : undefined), { id: "probed" });
  let atStartup: number | undefined;
  registry.on.startup(({ indexes }) => void (atStartup = indexes.probed!.size));
  registry.on.probe(({ indexes }) => [...indexes.probed!.keys()].sort(), { id: "names", cacheFor: 0 });
  for (const name of ["idx-a", "idx-b"]) {
    const response = await fetch(`${e.sandbox.url}/api/v1/namespaces/default/configmaps`, {
      method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify({ metadata: { name, labels: { scenario: "indexed-probe" } } }),
    });
    expect(response.status).toBe(201);
  }
  const stop = new AbortController();
  let probeUrl: string | undefined;
  const operator = run({
    signal: stop.signal, client: e.client, registry, logger: testLogger().logger,
    settings: settings({ liveness: "http://127.0.0.1:0/healthz" }), onStarted: (info) => (probeUrl = info.probeUrl),
  });
  try {
    await eventually(() => probeUrl !== undefined, "the probe server");
    let names: unknown;
    await eventually(async () => {
      names = ((await (await fetch(probeUrl!)).json()) as { probes: { names: unknown } }).probes.names;
      return Array.isArray(names) && (names as unknown[]).length === 2;
    }, "the probe to read the index");
    expect(names).toEqual(["idx-a", "idx-b"]);
    expect(atStartup).toBe(0);
  } finally {
    stop.abort();
    await operator;
  }
});
