// The event poster as client-go's recorder: identical events are counted into one Event, a
// posted one has its count PATCHed, similar messages are combined, and a per-object token
// bucket stops a hot loop from storming the API server. Against the sandbox.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { KubeClient } from "../../src/kube/client.ts";
import type { KubeObject, Resource } from "../../src/kube/types.ts";
import { EventPoster } from "../../src/posting/poster.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";

let sandbox: Sandbox;
let client: KubeClient;
const EVENTS: Resource = { group: "", version: "v1", plural: "events", kind: "Event", namespaced: true, statusSubresource: false };

beforeAll(async () => {
  sandbox = await startSandbox();
  client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
});
afterAll(async () => {
  client.close();
  await sandbox.stop();
});

let n = 0;
function subject(): KubeObject {
  n++;
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `subject-${n}`, namespace: "default", uid: `uid-${n}-${Math.random()}` } };
}

/** A client that counts the requests it sends (every one goes to the real sandbox). */
function counting() {
  const sent = { create: 0, patch: 0 };
  return {
    sent,
    client: {
      create: ((...a: Parameters<KubeClient["create"]>) => (sent.create++, client.create(...a))) as KubeClient["create"],
      patch: ((...a: Parameters<KubeClient["patch"]>) => (sent.patch++, client.patch(...a))) as KubeClient["patch"],
    },
  };
}

async function eventsAbout(object: KubeObject): Promise<any[]> {
  const list = await client.list(EVENTS, { namespace: "default" });
  return list.items.filter((e: any) => e.involvedObject?.uid === object.metadata.uid);
}

const flush = (poster: EventPoster) => poster.flush(AbortSignal.timeout(10_000));

test("a hot loop of one identical event makes one Event with the count, in one request", async () => {
  const c = counting();
  const poster = new EventPoster({ client: c.client });
  const object = subject();
  for (let i = 0; i < 500; i++) poster.post(object, "Normal", "Reconciled", "all children ready");
  await flush(poster);
  const events = await eventsAbout(object);
  expect(events).toHaveLength(1);
  expect(events[0].count).toBe(500);
  expect(c.sent).toEqual({ create: 1, patch: 0 });
});

test("the same event after it was posted PATCHes the existing Event's count instead of creating another", async () => {
  const c = counting();
  const poster = new EventPoster({ client: c.client });
  const object = subject();
  poster.post(object, "Warning", "Failed", "the child is missing");
  await flush(poster);
  poster.post(object, "Warning", "Failed", "the child is missing");
  poster.post(object, "Warning", "Failed", "the child is missing");
  await flush(poster);
  const events = await eventsAbout(object);
  expect(events.map((e) => [e.reason, e.count])).toEqual([["Failed", 3]]);
  expect(c.sent).toEqual({ create: 1, patch: 1 });
});

test("each object has a token bucket: past the burst, new events are dropped, and other objects are not affected", async () => {
  let clock = 0;
  const c = counting();
  const poster = new EventPoster({ client: c.client, correlation: { burst: 5, refillMs: 1000, maxSimilar: 100, now: () => clock } });
  const hot = subject();
  const calm = subject();
  for (let i = 0; i < 20; i++) poster.post(hot, "Normal", `Step${i}`, `step ${i}`);
  poster.post(calm, "Normal", "Started", "started");
  await flush(poster);
  expect((await eventsAbout(hot)).length).toBe(5);
  expect((await eventsAbout(calm)).length).toBe(1);
  expect(poster.stats.throttled).toBe(15);
  clock += 2000; // two tokens back
  for (let i = 20; i < 25; i++) poster.post(hot, "Normal", `Step${i}`, `step ${i}`);
  await flush(poster);
  expect((await eventsAbout(hot)).length).toBe(7);
});

test("many different messages of one reason are combined into one Event after the tenth", async () => {
  const poster = new EventPoster({ client: counting().client });
  const object = subject();
  for (let i = 0; i < 30; i++) poster.post(object, "Warning", "BackOff", `attempt ${i} failed`);
  await flush(poster);
  const events = await eventsAbout(object);
  expect(events).toHaveLength(11);
  const combined = events.filter((e) => e.message.startsWith("(combined from similar events): "));
  expect(combined).toHaveLength(1);
  expect(combined[0].count).toBe(20);
  expect(combined[0].message).toBe("(combined from similar events): attempt 29 failed");
});

test("Events are named as client-go's recorder names them (the object's name, a dot, a hex suffix), unique, within 253 characters", async () => {
  const poster = new EventPoster({ client });
  const object = subject();
  const long: KubeObject = { ...subject(), metadata: { name: "l".repeat(253), namespace: "default", uid: `uid-long-${Math.random()}` } };
  poster.post(object, "Normal", "First", "one");
  poster.post(object, "Normal", "Second", "two");
  poster.post(long, "Normal", "Long", "a name at the limit");
  await flush(poster);
  const names = (await eventsAbout(object)).map((e) => e.metadata.name as string);
  expect(names).toHaveLength(2);
  expect(new Set(names).size).toBe(2);
  for (const name of names) expect(name).toMatch(new RegExp(`^${object.metadata.name}\\.[0-9a-f]{17,}$`));
  const [atLimit] = (await eventsAbout(long)).map((e) => e.metadata.name as string);
  expect(atLimit!.length).toBeLessThanOrEqual(253);
  // generateName keeps only 58 characters of the object's name; the recorder's scheme keeps most of it.
  expect(atLimit!.startsWith("l".repeat(200))).toBe(true);
  // A cut that would end in "-" (or ".") drops those: "-.<suffix>" is not a DNS subdomain name.
  const dashed: KubeObject = { ...subject(), metadata: { name: `${"d".repeat(234)}-${"e".repeat(18)}`, namespace: "default", uid: `uid-dashed-${Math.random()}` } };
  poster.post(dashed, "Normal", "Dashed", "a cut at a dash");
  await flush(poster);
  const [cut] = (await eventsAbout(dashed)).map((e) => e.metadata.name as string);
  expect(cut).toMatch(/^d+\.[0-9a-f]+$/);
});

test("a queued event keeps what its Event says of the object, not the object (issue 15: a burst's queue held every handled body)", async () => {
  const poster = new EventPoster({ client: counting().client });
  let last: Pick<KubeObject, "metadata"> = { metadata: {} };
  const refs = (() => {
    const list: WeakRef<KubeObject>[] = [];
    for (let i = 0; i < 50; i++) {
      const object = { ...subject(), spec: { filler: "x".repeat(1000) } };
      object.metadata.resourceVersion = String(100 + i);
      poster.post(object, "Normal", "Handled", `handled ${i}`);
      list.push(new WeakRef(object));
      last = { metadata: { name: object.metadata.name, uid: object.metadata.uid } };
    }
    return list;
  })();
  await new Promise((resolve) => setImmediate(resolve)); // WeakRef targets are held to the end of the turn
  Bun.gc(true);
  // The collector scans the stack conservatively: a stray reference may keep one or two.
  expect(refs.filter((r) => r.deref() !== undefined).length).toBeLessThan(10);
  await flush(poster);
  const [event] = await eventsAbout(last as KubeObject);
  expect(event.involvedObject).toEqual({ apiVersion: "v1", kind: "ConfigMap", name: last.metadata.name, namespace: "default", uid: last.metadata.uid, resourceVersion: "149" });
});
