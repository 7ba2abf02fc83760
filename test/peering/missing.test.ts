// A missing peering CRD: fatal to nothing. With --peering given (mandatory) the operator
// stays frozen and says so once, until the CRD appears; without it, peering is simply off.

import { afterEach, beforeEach, expect, test } from "bun:test";
import { Peering } from "../../src/peering/index.ts";
import { Toggle } from "../../src/util/toggle.ts";
import { env, installCRDs, linesAt, testLogger, until, type Env } from "./helpers.ts";

let e: Env;
beforeEach(async () => {
  e = await env({ crds: [] });
});
afterEach(async () => {
  await e.stop();
});

function peering(mandatory: boolean) {
  const toggle = new Toggle();
  const { logger, lines } = testLogger();
  const p = new Peering({
    client: e.client, toggle, name: "default", namespace: "default", priority: 0, lifetime: 2, group: "kobun.dev", logger, mandatory, id: "op",
    recheck: { initialMs: 50, maxMs: 200 },
  });
  return { p, toggle, lines };
}

test("mandatory peering without its CRD stays frozen, says so once, and resumes once the CRD is created", async () => {
  const { p, toggle, lines } = peering(true);
  const controller = new AbortController();
  const done = p.run(controller.signal);
  expect(toggle.frozen).toBe(true); // synchronously, before any request
  for (let i = 0; i < 4; i++) await e.sandbox.waitFor((r) => r.path.includes("kobunpeerings"), 3000); // several re-checks
  expect(toggle.frozen).toBe(true);
  const warnings = linesAt(lines, "WARN");
  expect(warnings).toHaveLength(1);
  expect(warnings[0]).toContain("crds/peering-kobun.dev.yaml");

  await installCRDs(e.client, "kobun.dev");
  await until(toggle, false, 3000);
  expect(linesAt(lines, "INFO").filter((l) => l.includes("resuming"))).toHaveLength(1);
  expect(e.sandbox.store.get("kobun.dev", "kobunpeerings", "default", "default")?.status?.op).toBeDefined();
  controller.abort();
  await done;
});

test("optional peering without its CRD does not freeze: it says once that peering is not in use and returns", async () => {
  const { p, toggle, lines } = peering(false);
  await p.run(new AbortController().signal);
  expect(toggle.frozen).toBe(false);
  expect(linesAt(lines, "INFO").filter((l) => l.includes("not in use"))).toHaveLength(1);
  expect(lines.filter((l) => l.includes("WARN"))).toHaveLength(0);
});
