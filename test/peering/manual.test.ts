// `kobun freeze` / `kobun resume`: a manual record of high priority freezes the operators
// below it until it expires or is removed.

import { afterEach, beforeEach, expect, test } from "bun:test";
import { freezeManually, manualPeerId, Peering, resumeManually } from "../../src/peering/index.ts";
import { Toggle } from "../../src/util/toggle.ts";
import { env, eventually, linesAt, testLogger, until, type Env } from "./helpers.ts";

let e: Env;
beforeEach(async () => {
  e = await env();
});
afterEach(async () => {
  await e.stop();
});

test("a manual freeze (priority 100 by default) freezes a running operator; a manual resume lets it run again", async () => {
  const toggle = new Toggle();
  const { logger, lines } = testLogger();
  const controller = new AbortController();
  const done = new Peering({
    client: e.client, toggle, name: "default", namespace: "default", priority: 0, lifetime: 2, group: "kobun.dev", logger, mandatory: true, id: "op",
  }).run(controller.signal);
  await until(toggle, false);

  const id = await freezeManually({ client: e.client, name: "default", namespace: "default", group: "kobun.dev", lifetime: 600, message: "db migration" });
  expect(id).toBe(manualPeerId());
  await until(toggle, true);
  const record = e.sandbox.store.get("kobun.dev", "kobunpeerings", "default", "default")?.status?.[id];
  expect(record).toMatchObject({ priority: 100, lifetime: 600, message: "db migration" });
  const freezing = linesAt(lines, "INFO").filter((l) => l.includes("freezing"));
  expect(freezing).toHaveLength(1);
  expect(freezing[0]).toContain("db migration");
  expect(toggle.reasons()["peering:default/default"]).toContain("db migration");

  await resumeManually({ client: e.client, name: "default", namespace: "default", group: "kobun.dev" });
  await until(toggle, false);
  expect(e.sandbox.store.get("kobun.dev", "kobunpeerings", "default", "default")?.status?.[id]).toBeUndefined();

  controller.abort();
  await done;
});

test("a manual freeze below the operator's priority does not freeze it; an explicit id and priority are used", async () => {
  const toggle = new Toggle();
  const controller = new AbortController();
  const done = new Peering({
    client: e.client, toggle, name: "default", namespace: null, priority: 200, lifetime: 2, group: "kobun.dev", logger: testLogger().logger, mandatory: false, id: "op",
  }).run(controller.signal);
  await until(toggle, false);
  await freezeManually({ client: e.client, name: "default", namespace: null, group: "kobun.dev", lifetime: 60, priority: 150, id: "ops-team" });
  await eventually(() => e.sandbox.store.get("kobun.dev", "clusterkobunpeerings", undefined, "default")?.status?.["ops-team"]?.priority === 150);
  await e.sandbox.waitFor((r) => r.verb === "patch", 3000); // at least one more keep-alive round
  expect(toggle.frozen).toBe(false);
  controller.abort();
  await done;
});
