// daemons.md: a daemon that returns "is not restarted". A Kopf user knows Kopf's rule: a daemon
// that exited on its own is never spawned again for that object while the operator runs. kobun's
// is narrower, and daemons.md says how: not on a change of the object, but again once the object
// stopped matching and matches again (or after a freeze, or a restart).

import { expect, test } from "bun:test";
import { Registry } from "kobun";
import { startOperator } from "kobun/testing";
import { within } from "../docs-blackbox/helpers.ts";

test("a finished daemon: not restarted by a change, restarted once its object matches again", async () => {
  const registry = new Registry();
  let starts = 0;
  let started = Promise.withResolvers<void>();
  registry.on.daemon("v1/configmaps", () => {
    starts++;
    started.resolve();
    return { done: true };
  }, { id: "once", labels: { run: "yes" } });
  await using kit = await startOperator({ registry, logLevel: "info", timeout: 15_000 });
  const cm = (run: string, y: string) => ({ metadata: { name: "d", labels: { run } }, data: { y } });
  await kit.apply("v1/configmaps", cm("yes", "1"));
  await within(started.promise, 15_000, "the first start");
  await kit.logs.until("Daemon 'once' succeeded.");
  started = Promise.withResolvers<void>();
  await kit.apply("v1/configmaps", cm("yes", "2"));   // a change: not restarted
  await kit.apply("v1/configmaps", cm("no", "2"));    // stops matching: forgotten
  await kit.apply("v1/configmaps", cm("yes", "2"));   // matches again: started again
  await within(started.promise, 15_000, "the start after matching again");
  expect(starts).toBe(2);
}, 30_000);
