// Seed 000 reaches the handlers too: while the operator is frozen, another operator owns the
// objects, so a retry that comes due must not run (nor patch); it runs after the resume's relist.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry, TemporaryError } from "../../src/declaring/index.ts";
import { run } from "../../src/runtime/operator.ts";
import { Toggle } from "../../src/util/toggle.ts";
import { env, testLogger, type Env } from "../peering/helpers.ts";
import { eventually } from "./helpers.ts";

let e: Env;
beforeAll(async () => (e = await env()));
afterAll(() => e.stop());

test("a retry that comes due while frozen does not run until the operator resumes", async () => {
  const registry = new Registry();
  const attempts: { retry: number; frozen: boolean }[] = [];
  const toggle = new Toggle();
  let wake: (() => void) | undefined;
  registry.on.create("v1/configmaps", ({ retry }) => {
    attempts.push({ retry, frozen: toggle.frozen });
    wake?.();
    if (retry === 0) throw new TemporaryError("not yet", { delay: 0.3 });
  }, { id: "c" });
  const stop = new AbortController();
  const running = run({
    signal: stop.signal, client: e.client, registry, logger: testLogger().logger, toggle,
    settings: resolveSettings({ flags: { namespaces: ["default"], standalone: true } }),
  });
  const nth = (n: number, ms: number) => new Promise<boolean>((resolve) => {
    if (attempts.length >= n) return resolve(true);
    const timer = setTimeout(() => resolve(false), ms);
    wake = () => attempts.length >= n && (clearTimeout(timer), resolve(true));
  });
  const response = await fetch(`${e.sandbox.url}/api/v1/namespaces/default/configmaps`, {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ metadata: { name: "frozen-retry" } }),
  });
  expect(response.status).toBe(201);
  expect(await nth(1, 5000)).toBe(true);
  // Another operator takes over once the first attempt's retry is stored (a freeze during the
  // attempt would discard it: nothing is written for a cycle that lost its object).
  const progress = () => e.sandbox.store.get("", "configmaps", "default", "frozen-retry")?.metadata?.annotations?.["kobun.dev/c"] ?? "";
  await eventually(() => progress().includes('"retries":1'), "the retry's progress to be stored");
  toggle.freeze("test", "another operator took over");
  // Proving an absence: bounded at 3× the retry delay.
  expect(await nth(2, 900)).toBe(false);
  toggle.unfreeze("test");
  expect(await nth(2, 5000)).toBe(true);
  expect(attempts).toEqual([{ retry: 0, frozen: false }, { retry: 1, frozen: false }]);
  stop.abort();
  await running;
}, 15_000);
