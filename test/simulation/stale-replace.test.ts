// Class: a status overwritten from a stale copy, in the level-triggered style (on.reconcile). The
// reconcile lists the ConfigMaps labelled for a Widget (a ConfigMap wakes its Widget's reconcile
// through `watches`) and writes the Widget's whole status back, its own field set, as a PUT of the
// object it was given would: a JSON patch that replaces /status, with no precondition. Woken by a
// ConfigMap, a reconcile is given its object from the cache, which is never staler than this
// operator's own writes but shows another client's only once the watch brings them. Another
// controller (played by the scenario) sets status.ready; when the Widgets' watch lags (the merge
// fault holds their events from step 2, that write, through the settling of step 3), the copy
// predates it and the write wipes ready out. The fix makes the write conditional on the copy's
// resourceVersion (the patch sets it: the API server refuses a stale one with 409 Conflict) and, on
// a conflict, reads the Widget afresh from the API server and tries again. (Writing only its own
// field, with ctx.patch.status, fixes it too: see stale-status.test.ts.)

import { test } from "bun:test";
import { ApiError, Registry, resource, type ObjectKey, type TargetObject } from "kobun";
import { simulate } from "kobun/testing";
import { expectReadyWiped, readyThenConfigured } from "./another-writer.ts";
import { Widgets } from "./widgets.ts";

type Widget = TargetObject<typeof Widgets>;

function operator(fixed: boolean): Registry {
  const registry = new Registry();
  registry.on.reconcile(Widgets, async ({ name, body, api, cache }) => {
    const reported = cache.list(resource.configmaps, { labelSelector: `widget=${name}` }).map((c) => c.metadata.name!);
    const statusOf = (copy: Widget) => ({ op: "add", path: "/status", value: { ...copy.status, reported } });
    const write = (patch: object[]) => api.patch(Widgets, name, patch, { type: "json", subresource: "status" });
    if (!fixed) {
      await write([statusOf(body)]);
      return;
    }
    for (let copy = body; ;) {
      const precondition = { op: "replace", path: "/metadata/resourceVersion", value: copy.metadata.resourceVersion };
      try {
        await write([precondition, statusOf(copy)]);
        return;
      } catch (error) {
        if (!(error instanceof ApiError && error.code === 409)) throw error;
        copy = await api.get(Widgets, name); // the conflict says the copy is stale: read it afresh
      }
    }
  }, {
    watches: [{
      resource: resource.configmaps,
      map: (configMap): ObjectKey | null => {
        const widget = configMap.metadata.labels?.widget;
        return widget ? { name: widget } : null;
      },
    }],
  });
  return registry;
}

test("buggy: a reconcile writing its stale copy's whole status wipes another controller's field", async () => {
  await expectReadyWiped(simulate({ registry: operator(false), scenario: readyThenConfigured }));
}, 60_000);

test("fixed: a write conditional on the copy's resourceVersion, read again on a conflict, keeps it", async () => {
  await simulate({ registry: operator(true), scenario: readyThenConfigured }); // rejects if any schedule fails
}, 60_000);
