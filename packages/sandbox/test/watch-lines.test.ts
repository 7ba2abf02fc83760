// faults.watchLinesSent: the lines each client's watches were sent, which a simulation compares with
// those its operator read to know that none is still on its way.
import { expect, test } from "bun:test";
import { startSandbox } from "../src/index.ts";
import { api, cm, CM, WatchReader } from "./helpers.ts";

test("watchLinesSent counts the lines sent on each client's watches (not the empty line that opens one)", async () => {
  const own = await startSandbox();
  try {
    const as = (user: string) => ({ headers: { "Impersonate-User": user } });
    const rv = own.store.resourceVersion();
    const alice = await WatchReader.open(own, `${CM}?watch=true&resourceVersion=${rv}`, as("alice"));
    const bob = await WatchReader.open(own, `${CM}?watch=true&resourceVersion=${rv}`, as("bob"));
    expect(own.faults.watchLinesSent("alice")).toBe(0);
    await api(own, "POST", CM, cm("l1"));
    await api(own, "POST", CM, cm("l2"));
    expect(own.faults.watchLinesSent("alice")).toBe(2);
    expect(own.faults.watchLinesSent("bob")).toBe(2);
    expect(own.faults.watchLinesSent("carol")).toBe(0);
    expect((await bob.nextChange(5000)).object.metadata.name).toBe("l1");
    alice.close();
    bob.close();
  } finally {
    await own.stop();
  }
});
