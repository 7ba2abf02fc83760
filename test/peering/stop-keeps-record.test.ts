// What keeps the other replicas out while the handlers stop (the peering record kept written, the Lease
// kept renewed) ends when there is nothing left to keep: a write still on its way when the handlers have
// ended is cut short, so the record is removed (the Lease released) at once and not after that write's
// own bound, past the shutdown's 2.5 s for it; and a peering whose object is gone (its namespace was
// deleted, while the operator and its handlers go on) stops instead of retrying its write until the
// operator stops.

import { afterEach, beforeEach, expect, test } from "bun:test";
import { LeaseElection, peeringResource } from "../../src/peering/index.ts";
import { Toggle } from "../../src/util/toggle.ts";
import { env, startPeering, testLogger, until, type Env } from "./helpers.ts";

const resource = peeringResource("kobun.dev", true);
let e: Env;
const running: { controller: AbortController; done: Promise<void> }[] = [];
/** The handlers' end, as the runtime's shutdown announces it; resolved at the latest by afterEach. */
let handlers: PromiseWithResolvers<void>;

beforeEach(async () => {
  e = await env();
  handlers = Promise.withResolvers<void>();
});
afterEach(async () => {
  handlers.resolve();
  for (const r of running.splice(0)) {
    r.controller.abort();
    await r.done;
  }
  await e.stop();
});

const recordOf = (id: string) =>
  (e.sandbox.store.get("kobun.dev", "kobunpeerings", "default", "default") as { status?: Record<string, unknown> })
    ?.status?.[id];

/** Resolves with "ended" when `done` settles within `ms`, else "running". */
const endsWithin = (done: Promise<void>, ms: number) => {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<string>((resolve) => (timer = setTimeout(() => resolve("running"), ms)));
  return Promise.race([done.then(() => "ended"), late]).finally(() => clearTimeout(timer));
};

async function joined(id: string, lifetime: number) {
  const op = startPeering(e, running, {}, { id, lifetime, beforeLeave: () => handlers.promise });
  await until(op.toggle, false);
  const deadline = Date.now() + 5000;
  while (recordOf(id) === undefined && Date.now() < deadline) await Bun.sleep(10); // the store announces nothing
  expect(recordOf(id)).toBeDefined();
  return op;
}

test("a peering record's keep-alive write still on its way when the handlers end is cut short: the record goes at once", async () => {
  const op = await joined("op", 4); // a keep-alive about 3 s after the last, each write bounded by 4 s
  e.sandbox.faults.stallNext(1, 20_000, { verb: "patch", plural: "kobunpeerings" });
  const stalled = e.sandbox.waitFor((r) => r.verb === "patch" && r.plural === "kobunpeerings", 8000);
  op.controller.abort();
  await stalled;
  handlers.resolve();
  // Unfixed, the write ran to its 4 s bound first; the runtime gives peering 2.5 s after the handlers.
  expect(await endsWithin(op.done, 2000)).toBe("ended");
  expect(recordOf("op")).toBeUndefined();
}, 20_000);

test("a stopping peering whose object is gone (its namespace deleted) ends, though the operator's handlers run on", async () => {
  const op = await joined("op", 2);
  op.controller.abort(); // the namespace's scope closes; the handlers elsewhere have not ended
  await e.client.delete(resource, "default", "default");
  // Unfixed, it wrote every 500 ms to the missing object, answered 404 each time, until the operator stopped.
  expect(await endsWithin(op.done, 6000)).toBe("ended");
}, 20_000);

test("a Lease renewal still on its way when the handlers end is cut short: the Lease is released at once", async () => {
  const { logger } = testLogger();
  const toggle = new Toggle();
  const election = new LeaseElection({
    client: e.client, toggle, name: "my-operator", namespace: "default", id: "holder", logger,
    duration: 10, renewDeadline: 6, retryPeriod: 0.2, beforeLeave: () => handlers.promise,
  });
  const controller = new AbortController();
  const done = election.run(controller.signal);
  running.push({ controller, done });
  await until(toggle, false);
  e.sandbox.faults.stallNext(1, 20_000, { verb: "update", plural: "leases" });
  const stalled = e.sandbox.waitFor((r) => r.verb === "update" && r.plural === "leases", 8000);
  controller.abort();
  await stalled;
  handlers.resolve();
  // Unfixed, the renewal ran to its renewDeadline (6 s), the lease counted lost, and it was never released.
  expect(await endsWithin(done, 2000)).toBe("ended");
  const lease = e.sandbox.store.get("coordination.k8s.io", "leases", "default", "my-operator") as { spec?: any };
  expect(lease?.spec?.holderIdentity).toBeUndefined();
}, 20_000);
