// The example of docs/testing.md ("Virtual time"), run: an hourly requeue and a 60 s retry delay
// on the kit's virtual clock, tested without waiting for either.

import { expect, test } from "bun:test";
import { now, Registry, resource, TemporaryError } from "kobun";
import { startOperator } from "kobun/testing";

const registry = new Registry();
const runs: number[] = [];
registry.on.reconcile(resource.configmaps, ({ name, logger }) => {
  if (name !== "report") return;
  runs.push(now().getTime());                         // kobun's now(), not new Date(): the kit moves it
  logger.info("report made");
  return { requeueAfter: 3600 };
});
let attempts = 0;
registry.on.create(resource.secrets, () => {
  if (++attempts === 1) throw new TemporaryError("the vault is sealed", { delay: 60 });
}, { id: "unseal" });

test("an hourly reconcile runs 3 more times in 3 hours, a retry after 60 s: in milliseconds", async () => {
  await using kit = await startOperator({ registry, clock: "virtual", logLevel: "silent" });
  const start = kit.now().getTime();
  await kit.apply(resource.configmaps, { metadata: { name: "report" }, data: {} });
  await kit.logs.until(/report made/);                // it writes nothing to the object: wait on its line
  await kit.advance(3 * 3600);                        // each requeue fires, runs, asks for the next
  expect(runs.map((at) => (at - start) / 3_600_000)).toEqual([0, 1, 2, 3]);
  await kit.apply(resource.secrets, { metadata: { name: "token" }, stringData: { v: "x" } });
  await kit.logs.until(/the vault is sealed/);
  await kit.advance(59);
  expect(attempts).toBe(1);
  await kit.advance(1);                               // the retry's delay has passed: it ran again
  expect(attempts).toBe(2);
}, 30_000); // a start-up and several advances: bounded for a loaded 2-core machine
