// The pure peering decision (seed 000: freeze while a higher or equal peer lives; ghosts
// expire after their lifetime), the record format shared with Kopf, and the shipped CRDs.

import { expect, test } from "bun:test";
import { parse, parseAllDocuments } from "yaml";
import { decide, formatTime, keepaliveInterval, parsePeers, parseTime, peerId, peerRecord, peeringCRDs, peeringCRDsYAML, type Peer } from "../../src/peering/index.ts";

const T = Date.parse("2030-01-01T00:00:00Z");
function peer(id: string, priority: number, lifetime = 60, lastseen = T): Peer {
  return { id, priority, lifetime, lastseen, deadline: lastseen + lifetime * 1000 };
}

test("no peers but ourselves: not frozen, nothing to wait for", () => {
  const d = decide(T, "me", 0, [peer("me", 0)]);
  expect(d).toEqual({ frozen: false, blockers: [], conflict: false, dead: [] });
});

test("a live peer with a higher priority freezes; the next change is its expiry", () => {
  const d = decide(T + 1000, "me", 0, [peer("me", 0), peer("dev", 666, 60)]);
  expect(d.frozen).toBe(true);
  expect(d.conflict).toBe(false);
  expect(d.blockers.map((p) => p.id)).toEqual(["dev"]);
  expect(d.nextChangeAt).toBe(T + 60_000);
});

test("a live peer with a lower priority does not freeze", () => {
  expect(decide(T, "me", 10, [peer("low", 0)]).frozen).toBe(false);
});

test("a live peer with the same priority freezes as a conflict", () => {
  const d = decide(T, "me", 5, [peer("twin", 5, 30)]);
  expect(d.frozen).toBe(true);
  expect(d.conflict).toBe(true);
  expect(d.nextChangeAt).toBe(T + 30_000);
});

test("a higher peer and an equal one: not a conflict (the higher one is the cause)", () => {
  const d = decide(T, "me", 5, [peer("twin", 5, 10), peer("boss", 9, 60)]);
  expect(d.conflict).toBe(false);
  expect(d.blockers.map((p) => p.id)).toEqual(["boss", "twin"]);
  expect(d.nextChangeAt).toBe(T + 10_000); // the earliest blocker's expiry: re-decide then
});

test("a ghost is dead exactly at lastseen + lifetime, and listed for removal", () => {
  const ghost = peer("ghost", 9, 2);
  expect(decide(T + 1999, "me", 0, [ghost]).frozen).toBe(true);
  const d = decide(T + 2000, "me", 0, [ghost]);
  expect(d.frozen).toBe(false);
  expect(d.dead.map((p) => p.id)).toEqual(["ghost"]);
});

test("our own record is never a blocker nor dead, even when stale", () => {
  const d = decide(T + 10 * 60_000, "me", 0, [peer("me", 0, 1)]);
  expect(d.dead).toEqual([]);
  expect(d.frozen).toBe(false);
});

test("blockers: higher priorities first, then by deadline", () => {
  const d = decide(T, "me", 0, [peer("a", 5, 50), peer("b", 7, 90), peer("c", 5, 20)]);
  expect(d.blockers.map((p) => p.id)).toEqual(["b", "c", "a"]);
});

test("parsePeers reads Kopf's records, with Kopf's defaults, and skips malformed ones", () => {
  const peers = parsePeers(
    {
      kopf: { priority: 100, lifetime: 60, lastseen: "2030-01-01T00:00:00.123456+00:00" },
      naive: { priority: 1, lifetime: 5, lastseen: "2030-01-01T00:00:00" },
      defaults: {},
      broken: "nope",
      badtime: { lastseen: "yesterday" },
      manual: { priority: 100, lifetime: 3600, lastseen: "2030-01-01T00:00:00Z", message: "maintenance" },
    },
    T,
  );
  const byId = Object.fromEntries(peers.map((p) => [p.id, p]));
  expect(Object.keys(byId).sort()).toEqual(["defaults", "kopf", "manual", "naive"]);
  expect(byId.kopf!.lastseen).toBe(T + 123);
  expect(byId.naive!.lastseen).toBe(T); // no zone means UTC (old Kopf), not local time
  expect(byId.defaults).toMatchObject({ priority: 0, lifetime: 60, lastseen: T, deadline: T + 60_000 });
  expect(byId.manual!.message).toBe("maintenance");
  expect(parsePeers(null, T)).toEqual([]);
  expect(parsePeers([1, 2], T)).toEqual([]);
});

test("records are written the way Kopf writes them (whole-second lifetime, isoformat time)", () => {
  expect(peerRecord(T + 5, 3, 1.5)).toEqual({ priority: 3, lifetime: 2, lastseen: "2030-01-01T00:00:00.005000+00:00" });
  expect(parseTime(formatTime(T + 987))).toBe(T + 987);
  expect(parseTime("2030-01-01T02:00:00+0200")).toBe(T);
});

test("peerId is readable and stable for the process", () => {
  const id = peerId();
  expect(id).toBe(peerId());
  if (!process.env.POD_ID) expect(id).toMatch(/^[^@]+@[^/]+\/\d{14}\/[a-z0-9]{3}$/);
});

test("the CRDs in crds/ are the exported ones, structural, without a status subresource (like Kopf's)", async () => {
  for (const group of ["kobun.dev", "kopf.dev"]) {
    const file = await Bun.file(new URL(`../../crds/peering-${group}.yaml`, import.meta.url)).text();
    expect(file).toBe(peeringCRDsYAML(group));
    const docs = parseAllDocuments(file).map((d) => d.toJS());
    expect(docs).toEqual(peeringCRDs(group));
    for (const crd of docs) {
      const version = crd.spec.versions[0];
      expect(version.subresources).toBeUndefined();
      expect(version.schema.openAPIV3Schema.properties.status["x-kubernetes-preserve-unknown-fields"]).toBe(true);
    }
  }
  expect(parse(peeringCRDsYAML("kopf.dev").split("---")[2]!).metadata.name).toBe("kopfpeerings.kopf.dev");
  expect(peeringCRDs("kopf.dev").map((c) => c.spec!.names.kind)).toEqual(["ClusterKopfPeering", "KopfPeering"]);
  expect(peeringCRDs("kobun.dev").map((c) => c.metadata.name)).toEqual(["clusterkobunpeerings.kobun.dev", "kobunpeerings.kobun.dev"]);
});

test("keep-alives come 5–10 s before expiry for long lifetimes, and well before it for short ones", () => {
  expect(keepaliveInterval(60, 0)).toBe(55_000);
  expect(keepaliveInterval(60, 1)).toBe(50_000);
  expect(keepaliveInterval(2, 0)).toBe(1500);
  expect(keepaliveInterval(2, 1)).toBeCloseTo(1340, 5);
  expect(keepaliveInterval(1, 0.5)).toBeLessThan(1000);
});
