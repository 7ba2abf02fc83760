// kit.events (issue 35, item 6): the Events posted about an object, found by its uid; the
// operator posts them in the background, so `until` waits for them on a watch.

import { expect, test } from "bun:test";
import Type from "typebox";
import { defineResource, Registry } from "kobun";
import { startOperator } from "kobun/testing";

function announcer() {
  const registry = new Registry();
  const Releases = defineResource({
    group: "testing.kobun.dev", kind: "Release", plural: "releases",
    schema: { spec: Type.Object({ version: Type.String() }), status: Type.Object({}) },
  });
  registry.on.create(Releases, ({ body, spec, event }) => {
    event.info(body, "Released", `version ${spec.version} is out`);
    if (spec.version.endsWith("-rc")) event.warn(body, "Prerelease", "not for production");
  }, { id: "announce" });
  return { registry, Releases };
}

test("events waits on a watch until the Events about the object pass, and lists them oldest first", async () => {
  const { registry, Releases } = announcer();
  await using kit = await startOperator({ registry, logLevel: "silent" });
  const release = await kit.apply(Releases, { metadata: { name: "v2" }, spec: { version: "2.0-rc" } });
  await kit.apply(Releases, { metadata: { name: "v1" }, spec: { version: "1.0" } }); // its Events are not v2's
  const events = await kit.events(release, { until: (list) => list.some((e) => e.reason === "Logging") });
  expect(events.map((e) => [e.type, e.reason, e.message])).toEqual([
    ["Normal", "Released", "version 2.0-rc is out"],
    ["Warning", "Prerelease", "not for production"],
    ["Normal", "Logging", "Handler 'announce' succeeded."],
  ]);
  expect(events.every((e) => e.involvedObject.uid === release.metadata.uid)).toBe(true);
  // Without `until`: the Events now, by the same selection.
  const now = await kit.events(release);
  expect(now.map((e) => e.reason)).toEqual(["Released", "Prerelease", "Logging"]);
});

test("events by name and kind when the object has no uid; none yet is an empty list", async () => {
  const { registry, Releases } = announcer();
  await using kit = await startOperator({ registry, logLevel: "silent" });
  expect(await kit.events({ kind: "Release", metadata: { name: "unborn", namespace: "default" } })).toEqual([]);
  await kit.apply(Releases, { metadata: { name: "named" }, spec: { version: "3.0" } });
  const byName = { kind: "Release", metadata: { name: "named", namespace: "default" } };
  const events = await kit.events(byName, { until: (list) => list.length >= 2 });
  expect(events.map((e) => e.reason)).toEqual(["Released", "Logging"]);
});

test("events with until times out naming the object, the condition and the Events seen", async () => {
  const { registry, Releases } = announcer();
  await using kit = await startOperator({ registry, logLevel: "silent" });
  const release = await kit.apply(Releases, { metadata: { name: "quiet" }, spec: { version: "1.0" } });
  await kit.events(release, { until: (list) => list.length >= 2 });
  const error = await kit.events(release, { until: (list) => list.some((e) => e.reason === "Never"), timeout: 1500 })
    .catch((e: Error) => e);
  expect((error as Error).message).toStartWith("events(Release default/quiet): (list) => list.some((e) => e.reason === \"Never\") not true after 1500 ms; 2 Events in default: ");
  expect((error as Error).message).toContain("Normal Released: version 1.0 is out");
}, 15_000); // the timeout under test is long enough for a loaded machine's watch to list the two Events

test("a condition that throws counts as \"not yet\" (as until's does); the timeout says what it last threw", async () => {
  const { registry, Releases } = announcer();
  await using kit = await startOperator({ registry, logLevel: "silent" });
  const release = await kit.apply(Releases, { metadata: { name: "thrower" }, spec: { version: "1.0" } });
  // Throws on the empty list a watch starts with, until the first Event arrives.
  const events = await kit.events(release, { until: (list) => list[0]!.reason === "Released" && list.length >= 2 });
  expect(events.map((e) => e.reason)).toEqual(["Released", "Logging"]);
  const error = await kit.events(release, { until: (list) => list[5]!.reason === "Never", timeout: 1500 }).catch((e: Error) => e);
  expect((error as Error).message).toContain("not true after 1500 ms; 2 Events in default: ");
  expect((error as Error).message).toMatch(/; the condition last threw: .*undefined/);
}, 15_000);

test("events look in the object's namespace, else the kit's, not in every namespace", async () => {
  const { registry, Releases } = announcer();
  await using kit = await startOperator({ registry, logLevel: "silent", namespace: "team-a" });
  await kit.apply(Releases, { metadata: { name: "same" }, spec: { version: "1.0" } });
  // An Event about a namesake in another namespace, posted by someone else.
  const core = { group: "", version: "v1", namespaced: true, statusSubresource: false };
  await kit.client.create({ ...core, plural: "namespaces", kind: "Namespace", namespaced: false }, null, { apiVersion: "v1", kind: "Namespace", metadata: { name: "team-b" } });
  const stranger = {
    apiVersion: "v1", kind: "Event", metadata: { name: "same.elsewhere", namespace: "team-b" }, reason: "Elsewhere", message: "not this one",
    type: "Normal", involvedObject: { kind: "Release", name: "same", namespace: "team-b" }, firstTimestamp: new Date(0).toISOString(),
  };
  await kit.client.create({ ...core, plural: "events", kind: "Event" }, "team-b", stranger);
  const byName = { kind: "Release", metadata: { name: "same" } }; // no namespace: the kit's
  const events = await kit.events(byName, { until: (list) => list.length >= 2 });
  expect(events.map((e) => `${e.metadata.namespace} ${e.reason}`)).toEqual(["team-a Released", "team-a Logging"]);
  expect((await kit.events(byName, { namespace: "team-b" })).map((e) => e.reason)).toEqual(["Elsewhere"]);
});
