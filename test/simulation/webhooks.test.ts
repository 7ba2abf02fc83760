// Webhooks under simulation: the scenario's writes go through the operator's own admission
// webhooks (the sandbox calls them as kube-apiserver would), so a mutating webhook's defaults are
// part of the state every run must reach. A crashed instance's webhook server is gone with it; the
// restarted one registers its own before the next step, so the scenario's writes keep passing.

import { expect, test } from "bun:test";
import { AdmissionError, adopt, Registry } from "kobun";
import { simulate } from "kobun/testing";
import { Widgets, configMap } from "./widgets.ts";

function operator(): Registry {
  const registry = new Registry();
  registry.on.mutate(Widgets, ({ object }) => {
    object.spec = { phase: "defaulted", ...object.spec }; // changed in place: kobun answers with the JSON Patch
  }, { id: "default-phase" });
  registry.on.validate(Widgets, ({ object }) => {
    if ((object.spec?.replicas ?? 0) > 5) throw new AdmissionError("at most 5 replicas"); // its message reaches the caller
  }, { id: "at-most-five" });
  registry.on.reconcile(Widgets, async ({ name, body, spec, api }) => {
    await api.apply(adopt(configMap(`${name}-phase`, { phase: String(spec.phase) }), { owner: body }));
  });
  return registry;
}

test("a scenario's writes pass the operator's webhooks in every run: defaults applied, limits refused", async () => {
  const refused: string[] = [];
  const result = await simulate({
    registry: operator(),
    config: { webhooks: { url: "https://127.0.0.1:0" } }, // served on a free port, as `kobun dev` does
    invariants: {
      "the mutating webhook defaulted the phase": async (world) =>
        (await world.get(Widgets, "w1"))?.spec.phase === "defaulted" || "w1 has no defaulted phase",
    },
    scenario: async (world) => {
      await world.apply(Widgets, { metadata: { name: "w1" }, spec: { replicas: 1 } });
      await world.apply(Widgets, { metadata: { name: "w1" }, spec: { replicas: 9 } })
        .catch((error: Error) => refused.push(error.message));
    },
  });
  expect(result.runs.every((run) => run.ok)).toBe(true);
  expect(refused.length).toBe(result.runs.length + 1); // every run, and the reference run
  expect(refused[0]).toContain("at most 5 replicas");
}, 120_000);
