// Class: a status overwritten from a stale copy. When a ConfigMap labelled for a Widget appears,
// the operator marks the Widget Configured. It takes the Widget from an index (what its watch last
// brought) and writes the whole status back (a JSON patch that replaces /status: the copy's status
// with its own field set), as a PUT of a read-modify-write would. Another controller (played by the
// scenario) sets status.ready; when the Widgets' watch lags (the merge fault holds their events from
// step 2, that controller's write, through the settling of step 3), the copy predates it and the
// operator's write wipes ready out. kobun has no protection to offer here: an index, like any
// informer cache, shows other clients' writes only once the watch brings them. The fix writes only
// its own field, with a merge patch of the status, and leaves the rest to its owners.

import { expect, test } from "bun:test";
import { Registry, resource, type Index } from "kobun";
import { simulate, SimulationFailure } from "kobun/testing";
import { expectReadyWiped, readyThenConfigured } from "./another-writer.ts";
import { Widgets } from "./widgets.ts";

type Widget = { status?: Record<string, unknown> };

function operator(fixed: boolean): Registry {
  const registry = new Registry();
  registry.on.index(Widgets, ({ name, body }) => ({ [name]: body }), { id: "widgets" });
  registry.on.create(resource.configmaps, async ({ labels, api, indexes }) => {
    const parent = labels.widget;
    const [copy] = (indexes.widgets as Index<Widget, string>).get(parent ?? "");
    if (parent === undefined || copy === undefined) return;
    if (fixed) {
      await api.patch(Widgets, parent, { status: { phase: "Configured" } }, { subresource: "status" });
    } else {
      const status = { ...copy.status, phase: "Configured" };
      await api.patch(Widgets, parent, [{ op: "add", path: "/status", value: status }], {
        type: "json", subresource: "status",
      });
    }
  }, { id: "configured" });
  return registry;
}

test("buggy: the whole status written from an index's stale copy wipes another controller's field", async () => {
  await expectReadyWiped(simulate({ registry: operator(false), scenario: readyThenConfigured }));
}, 60_000);

test("fixed: a merge patch of its own field leaves the others' fields alone", async () => {
  // Not under `recreate`: a Widget made anew after its ConfigMap's create handler ran is never marked
  // again (the handler is edge-triggered on the ConfigMap): another class, which simulate finds too.
  const faults = { recreate: false };
  await simulate({ registry: operator(true), scenario: readyThenConfigured, faults }); // rejects if any schedule fails
}, 60_000);

test("the fixed operator, made anew under its name, is never marked again: found by recreate", async () => {
  const outcome = await simulate({ registry: operator(true), scenario: readyThenConfigured }).catch((e: Error) => e);
  expect(outcome).toBeInstanceOf(SimulationFailure);
  const { failure, shrunk } = outcome as SimulationFailure;
  expect(failure.details).toContain('~ widgets default/w1: status.phase: "Configured" in the reference, absent here');
  expect(shrunk.map((fault) => fault.kind)).toEqual(["recreate"]);
}, 60_000);
