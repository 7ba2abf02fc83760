// on.reconcile's registration: its options checked and named, one reconcile per resource, and
// what it makes the operator watch (the resource, what it owns, what it watches) and grant
// (owned resources are written: children; watched ones only read).

import { expect, test } from "bun:test";
import { Registry, RegistrationError } from "../../src/declaring/index.ts";

test("a reconcile registers with its options, named after its function", () => {
  const registry = new Registry();
  const fn = function cronJobs() {};
  expect(registry.on.reconcile("cronjobs.batch.tutorial.kubebuilder.io", fn, { owns: ["batch/v1/jobs"], finalizer: true })).toBe(fn);
  const [spec] = registry.reconciles.specs;
  expect(spec).toMatchObject({ id: "cronJobs", owns: ["batch/v1/jobs"], finalizer: true, on: "generation" });
});

test("bad options are RegistrationErrors naming the option", () => {
  const registry = new Registry();
  expect(() => registry.on.reconcile("things", () => {}, { on: "sometimes" as never })).toThrow(RegistrationError);
  expect(() => registry.on.reconcile("things", () => {}, { on: "sometimes" as never })).toThrow(/on must be "generation" or "any"/);
  expect(() => registry.on.reconcile("things", () => {}, { timeout: 0 })).toThrow(/timeout must be/);
  expect(() => registry.on.reconcile("things", () => {}, { watches: [{ resource: "configmaps" } as never] })).toThrow(/map function/);
  expect(() => registry.on.reconcile("things", 42 as never)).toThrow(/not a function/);
});

test("one reconcile per resource", () => {
  const registry = new Registry();
  registry.on.reconcile("things", function first() {});
  expect(() => registry.on.reconcile("things", function second() {})).toThrow(/things already has a reconcile \("first"\)/);
});

test("it watches its resource, what it owns and what it watches; owned ones are children, watched ones read only", () => {
  const registry = new Registry();
  registry.on.reconcile("apps.example.com", () => {}, {
    owns: ["apps/v1/deployments", "services"],
    watches: [{ resource: "configmaps", map: () => null }],
  });
  expect(registry.selectors()).toEqual(["apps.example.com", "apps/v1/deployments", "services", "configmaps"]);
  expect(registry.children()).toEqual(["apps/v1/deployments", "services"]);
  expect(registry.watchedOnly()).toEqual(["configmaps"]);
  registry.clear();
  expect(registry.selectors()).toEqual([]);
});
