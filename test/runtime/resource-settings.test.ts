// A resource's kobun.yaml entry overrides the global workers, handling and reconcile backoff for
// that resource alone (runtime/resources.ts's settingsFor); absent keys inherit.

import { expect, test } from "bun:test";
import { resolveSettings } from "../../src/config/index.ts";
import { settingsFor } from "../../src/runtime/resources.ts";

test("an entry's reconcile backoff, workers and handling override the global ones for that resource only", () => {
  const settings = resolveSettings({
    fileData: {
      reconcile: { backoff: { max: 60 } },
      resources: {
        widgets: { reconcile: { backoff: { initial: "1s" } }, workers: { limit: 3 } },
        gadgets: { handling: { retries: 2 } },
      },
    },
  });
  const widgets = settingsFor(settings, settings.resources.widgets);
  expect(widgets.reconcile.backoff).toEqual({ initial: 1, max: 60 });
  expect(widgets.workers.limit).toBe(3);
  expect(widgets.handling.retries).toBe(settings.handling.retries);
  const gadgets = settingsFor(settings, settings.resources.gadgets);
  expect(gadgets.reconcile.backoff).toEqual({ initial: 0.005, max: 60 });
  expect(gadgets.handling.retries).toBe(2);
  expect(settingsFor(settings, undefined)).toBe(settings);
});
