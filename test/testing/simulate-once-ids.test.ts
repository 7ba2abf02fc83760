// simulate({ once })'s check of sub-handler ids against the fault-free run's log: an id with a slash that no
// sub-handler ran is refused (a misspelt one could never fail), but a registered handler's own id with a slash (an
// unnamed handler's default) is not taken for a sub-handler's.

import { expect, test } from "bun:test";
import { Registry } from "../../src/declaring/index.ts";
import { checkOnceRan } from "../../src/testing/simulate-options.ts";

test("a registered id with a slash is a handler's, not a sub-handler that never ran", () => {
  const registry = new Registry();
  registry.on.create("v1/configmaps", () => {});
  const [unnamed] = registry.handlers.map((handler) => handler.id);
  expect(unnamed).toContain("/");
  expect(() => checkOnceRan([unnamed!], [], registry)).not.toThrow();
  expect(() => checkOnceRan(["provision/dta"], ["Handler 'provision/data' succeeded."], registry)).toThrow(
    'simulate({ once }): no sub-handler "provision/dta" ran in the fault-free run, so it could never run twice ' +
      '(the sub-handlers that ran: "provision/data")',
  );
});
