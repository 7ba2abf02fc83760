// An apply that changes nothing keeps its managedFields entry's time (as kube-apiserver's
// managedFieldsUpdater), so it is a no-op: no new resourceVersion, no watch event, even in a
// later second than the write before it. One that changes a value takes the new time.
import { expect, test } from "bun:test";
import { applyConfiguration } from "../src/apply.ts";

const req = (now: string) => ({ manager: "op", force: true, apiVersion: "v1", now });
const configMap = (v: string) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" }, data: { v } });

test("the same apply a second later keeps the time; a changed value takes the new one", () => {
  const created = applyConfiguration(undefined, configMap("1"), req("2026-01-01T00:00:00Z"));
  const again = applyConfiguration(created, configMap("1"), req("2026-01-01T00:00:01Z"));
  expect(again).toEqual(created);
  const changed = applyConfiguration(created, configMap("2"), req("2026-01-01T00:00:02Z"));
  expect(changed.metadata.managedFields[0].time).toBe("2026-01-01T00:00:02Z");
});
