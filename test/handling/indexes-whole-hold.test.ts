// A stream watched whole (sharding: a reconcile's child resource) holds handlers until it lists,
// through Indexes even when there is no on.index: its warning then names the child resource it
// waits for, not an empty list of indexes "to be primed".

import { expect, test } from "bun:test";
import { Indexes } from "../../src/handling/indexes.ts";
import { Registry } from "../../src/declaring/registry.ts";
import type { Resource } from "../../src/kube/types.ts";
import { Logger, memorySink } from "../../src/util/log.ts";

const jobs: Resource = { group: "batch", version: "v1", plural: "jobs", kind: "Job", namespaced: true, statusSubresource: true };
const pods: Resource = { group: "", version: "v1", plural: "pods", kind: "Pod", namespaced: true, statusSubresource: true };

test("a whole stream that cannot list, without any index, is warned of by the child resource it holds handlers for", async () => {
  const sink = memorySink("warn", "json");
  const indexes = new Indexes([], new Logger(sink), 20);
  const stream = indexes.stream(jobs, "jobs (whole)", true);
  const line = JSON.parse(await sink.until("has not completed its first LIST", { timeout: 5000 }));
  stream.end();
  expect(line.msg).toBe("handlers wait for what a reconcile reads: a stream of a resource it owns or watches has not " +
    "completed its first LIST");
  expect(line.resource).toBe("jobs.batch");
  expect(line.stream).toBe("jobs.batch@jobs (whole)");
  expect(line.indexes).toBeUndefined();
});

test("an indexed stream's warning still names its indexes", async () => {
  const registry = new Registry();
  registry.on.index("pods", ({ name }) => ({ [name]: true }), { id: "names" });
  const sink = memorySink("warn", "json");
  const indexes = new Indexes(registry.indexes, new Logger(sink), 20);
  const stream = indexes.stream(pods, "default");
  const line = JSON.parse(await sink.until("has not completed its first LIST", { timeout: 5000 }));
  stream.end();
  expect(line.indexes).toBe("names");
  expect(line.children).toBeUndefined();
});
