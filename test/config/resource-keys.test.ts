// A `resources:` key names a registered resource in any form kubectl reads a resource name, as
// well as by the selector the handlers registered or its alias; it must name exactly one.

import { expect, test } from "bun:test";
import { keyNames, resourcesNamed, type KeyCandidate } from "../../src/config/index.ts";

const examples: KeyCandidate = {
  text: "kobunexamples.kobun.dev/v1", group: "kobun.dev", version: "v1", plural: "kobunexamples",
  kind: "KobunExample", singular: "kobunexample", shortNames: ["kex"], alias: "examples",
};
const jobs: KeyCandidate = { text: "batch/v1/jobs", group: "batch", version: "v1", plural: "jobs" };
const configmaps: KeyCandidate = { text: "configmaps", plural: "configmaps" };
const cronjobs: KeyCandidate = { text: "cronjobs.batch", group: "batch", plural: "cronjobs" };
const all = [examples, jobs, configmaps, cronjobs];

test("every kubectl form of a defined resource's name names it: plural, singular, kind, short name, with group and version", () => {
  const forms = [
    "kobunexamples.kobun.dev/v1", "examples", "kobunexamples", "kobunexamples.kobun.dev", "kobunexamples.v1.kobun.dev",
    "kobunexample", "kobunexample.kobun.dev", "KobunExample", "kobunexample.v1.kobun.dev", "KobunExample.kobun.dev",
    "kex", "kex.kobun.dev", "kobun.dev/v1/kobunexamples", "kobunexamples.kobun.dev/v1",
  ];
  for (const key of forms) expect([key, resourcesNamed(key, all)]).toEqual([key, ["kobunexamples.kobun.dev/v1"]]);
});

test("a built-in's plural with its group and version, in kubectl's and in kobun's selector forms", () => {
  for (const key of ["jobs", "jobs.batch", "jobs.v1.batch", "batch/v1/jobs", "jobs.batch/v1", "Jobs"]) {
    expect([key, resourcesNamed(key, all)]).toEqual([key, ["batch/v1/jobs"]]);
  }
  expect(resourcesNamed("configmaps", all)).toEqual(["configmaps"]);
  expect(resourcesNamed("cronjobs", all)).toEqual(["cronjobs.batch"]);
});

test("a key whose group or version is not the selector's names nothing; one naming two resources names both", () => {
  for (const key of ["jobs.apps", "jobs.v2.batch", "batch/v2/jobs", "kobunexamples.v2.kobun.dev", "kex.example.com"]) {
    expect([key, resourcesNamed(key, all)]).toEqual([key, []]);
  }
  // The selector names no group (or no version): the key cannot be checked against discovery's answer here.
  expect(keyNames("configmaps.v1", configmaps)).toBe(false);
  expect(keyNames("cronjobs.v1.batch", cronjobs)).toBe(false);
  expect(keyNames("bad//key", jobs)).toBe(false);
  const otherJobs: KeyCandidate = { text: "jobs.example.com/v1", group: "example.com", version: "v1", plural: "jobs" };
  expect(resourcesNamed("jobs", [jobs, otherJobs]).sort()).toEqual(["batch/v1/jobs", "jobs.example.com/v1"]);
  // The exact selector wins over a form that would name another too.
  expect(resourcesNamed("batch/v1/jobs", [jobs, otherJobs])).toEqual(["batch/v1/jobs"]);
});

test("an alias that is also a kubectl form of another resource's name names both (ambiguous), not the alias's alone", () => {
  const gadgets: KeyCandidate = { text: "gadgets.x.io/v1", alias: "widgets", group: "x.io", version: "v1", plural: "gadgets" };
  const widgets: KeyCandidate = { text: "widgets.y.io/v1", group: "y.io", version: "v1", plural: "widgets" };
  expect(resourcesNamed("widgets", [gadgets, widgets])).toEqual(["gadgets.x.io/v1", "widgets.y.io/v1"]);
  expect(resourcesNamed("widgets.y.io", [gadgets, widgets])).toEqual(["widgets.y.io/v1"]);
  expect(resourcesNamed("widgets", [gadgets])).toEqual(["gadgets.x.io/v1"]); // an alias naming one is its
});
