// A missing peering CRD: fatal to nothing. With --peering given (mandatory) the operator
// stays frozen and says so once, until the CRD appears; without it, peering is off, and a
// warning says that replicas would then all handle every object.

import { afterEach, beforeEach, expect, test } from "bun:test";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/index.ts";
import { Peering } from "../../src/peering/index.ts";
import { run } from "../../src/runtime/operator.ts";
import { Toggle } from "../../src/util/toggle.ts";
import { eventually } from "../runtime/helpers.ts";
import { env, installCRDs, linesAt, testLogger, until, type Env } from "./helpers.ts";

let e: Env;
beforeEach(async () => {
  e = await env({ crds: [] });
});
afterEach(async () => {
  await e.stop();
});

function peering(mandatory: boolean, equalsShare = false) {
  const toggle = new Toggle();
  const { logger, lines } = testLogger();
  const p = new Peering({
    client: e.client, toggle, name: "default", namespace: "default", priority: 0, lifetime: 2, group: "kobun.dev", logger, mandatory, id: "op",
    recheck: { initialMs: 50, maxMs: 200 }, equalsShare,
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

test("optional peering without its CRD does not freeze: it warns once that replicas would all handle every object, naming the fix", async () => {
  const { p, toggle, lines } = peering(false);
  await p.run(new AbortController().signal);
  expect(toggle.frozen).toBe(false);
  const warnings = linesAt(lines, "WARN");
  expect(warnings).toHaveLength(1);
  expect(warnings[0]).toContain("peering is not in use");
  expect(warnings[0]).toContain("each handles every object"); // the consequence
  expect(warnings[0]).toContain("kobun manifests"); // the fix
  expect(warnings[0]).toContain("--standalone"); // and how to say that one replica is meant
});

test("sharded replicas without the peering CRD still share the objects: the warning says a higher priority cannot freeze them, not that each handles every object", async () => {
  const { p, toggle, lines } = peering(false, true);
  await p.run(new AbortController().signal);
  expect(toggle.frozen).toBe(false);
  const warnings = linesAt(lines, "WARN");
  expect(warnings).toHaveLength(1);
  expect(warnings[0]).not.toContain("each handles every object");
  expect(warnings[0]).toContain("kobun freeze"); // what is lost
  expect(warnings[0]).toContain("kobun manifests"); // the fix
});

test("an operator serving several namespaces without the peering CRD warns once, not once per namespace", async () => {
  const registry = new Registry();
  registry.on.create("v1/configmaps", () => {}, { id: "noop" });
  const { logger, lines } = testLogger();
  const stop = new AbortController();
  const running = run({ signal: stop.signal, client: e.client, registry, logger, settings: resolveSettings({ flags: { namespaces: ["default", "a", "b"] } }) });
  await eventually(() => lines.filter((l) => l.includes("peering is not in use")).length === 3, "the three peerings to find no CRD");
  stop.abort();
  await running;
  expect(linesAt(lines, "WARN").filter((l) => l.includes("peering is not in use"))).toHaveLength(1);
});
