// A shard given up and taken back starts its objects as at start-up (Kopf and controller-runtime:
// a replica that loses ownership forgets, a new owner starts fresh from a LIST): on.resume runs
// for the objects found, with a fresh memo, and nothing of the objects deleted meanwhile is kept.

import { afterAll, expect, test } from "bun:test";
import { Registry } from "../../src/declaring/index.ts";
import type { Resource } from "../../src/kube/types.ts";
import { eventually } from "./helpers.ts";
import { releaseShardLease, runKeeper, takeShardLease, twoShardSandbox } from "./shard-leases.ts";

const CONFIGMAPS: Resource = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false };
const started: { stop(): Promise<void> }[] = [];
afterAll(async () => {
  for (const one of started) await one.stop();
});

async function retake(serverSide: boolean): Promise<void> {
  const ns = `retake-${serverSide ? "server" : "client"}`;
  const two = await twoShardSandbox(serverSide, ns);
  started.push(two);
  const { sandbox, admin, away, shardLease, holder } = two;
  const configmap = (namespace: string, name: string) => admin.create(CONFIGMAPS, namespace, { apiVersion: "v1", kind: "ConfigMap", metadata: { name } });

  const registry = new Registry();
  const runs: string[] = [];
  registry.on.create("v1/configmaps", ({ name, namespace, memo }) => {
    memo.mark = "from the first hold";
    runs.push(`create ${namespace === away ? "away" : "home"}/${name}`);
  }, { id: "made" });
  registry.on.resume("v1/configmaps", ({ name, namespace, memo }) => {
    runs.push(`resume ${namespace === away ? "away" : "home"}/${name} memo=${memo.mark ?? "fresh"}`);
  }, { id: "resumed" });
  const keeper = await runKeeper(sandbox, registry, ns, [ns, away]);
  const { lines } = keeper;
  try {
    await eventually(() => holder() === "keeper" && lines.filter((l) => l.includes("acquired a shard")).length === 2, "both shards held");
    await configmap(away, "kept");
    await configmap(away, "gone");
    await configmap(ns, "home");
    await eventually(() => runs.length === 3, "the three created handled");
    // Another replica takes the shard; meanwhile one object of it is deleted; then the shard comes back.
    const taken = await takeShardLease(admin, ns, shardLease, "thief");
    await eventually(() => lines.some((l) => l.includes("lost a shard")), "the shard lost");
    await admin.delete(CONFIGMAPS, away, "gone");
    runs.length = 0;
    await releaseShardLease(admin, taken);
    await eventually(() => holder() === "keeper", "the shard taken back");
    await eventually(() => runs.length > 0, "the objects of the shard taken back resumed");
    await configmap(ns, "marker"); // the home shard's stream goes on: once this is handled, nothing else is on its way
    await eventually(() => runs.includes("create home/marker"), "the marker handled");
    expect(runs.sort()).toEqual(["create home/marker", "resume away/kept memo=fresh"]);
  } finally {
    await keeper.stop();
  }
}

for (const serverSide of [true, false]) {
  test(`${serverSide ? "server" : "client"}-side sharding: a shard taken back starts as at start-up: on.resume runs for its objects, with a fresh memo`, () => retake(serverSide), 15_000);
}
