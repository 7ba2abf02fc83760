// Every kind of registration refuses an option it does not have, by name, with the closest known one: a typo in
// JavaScript, or an option of another kind of handler (a filter on.reconcile has no such thing as), is never
// silently ignored.

import { expect, test } from "bun:test";
import { Registry, RegistrationError } from "../../src/declaring/index.ts";
import type { KubeObject } from "../../src/kube/index.ts";

const fn = () => {};

test("a typo in a handler's options is refused with the option it most likely meant", () => {
  const { on } = new Registry();
  expect(() => on.create("things", fn, { retires: 3 } as never)).toThrow(RegistrationError);
  expect(() => on.create("things", fn, { retires: 3 } as never)).toThrow(
    /^on\.create\("things"\): no option "retires"; did you mean "retries"\? \(its options: id, retries, /,
  );
  expect(() => on.field("things", { field: "spec.size", vaule: 1 } as never, fn)).toThrow(/no option "vaule"; did you mean "value"/);
  expect(() => on.event("things", fn, { ids: "x" } as never)).toThrow(/on\.event\("things"\): no option "ids"; did you mean "id"/);
  // Two letters swapped are one edit: "idel" is "idle", not "id".
  expect(() => on.timer("things", fn, { interval: 1, idel: 3 } as never)).toThrow(/no option "idel"; did you mean "idle"\?/);
});

test("an option of another kind is refused, not ignored", () => {
  const { on } = new Registry();
  expect(() => on.create("things", fn, { optional: true } as never)).toThrow(/on\.create\("things"\): no option "optional"/);
  expect(() => on.event("things", fn, { retries: 3 } as never)).toThrow(/on\.event\("things"\): no option "retries"/);
  expect(() => on.reconcile("things", fn, { labels: { app: "x" } } as never)).toThrow(
    /^on\.reconcile\("things"\): no option "labels" \(its options: id, owns, watches, children, on, finalizer, timeout, when\)$/,
  );
  expect(() => on.daemon("things", fn, { interval: 5 } as never)).toThrow(/on\.daemon\("things"\): no option "interval"/);
  expect(() => on.timer("things", fn, { interval: 5, cancellationBackoff: 1 } as never)).toThrow(/no option "cancellationBackoff"/);
  expect(() => on.index("things", function byName() {}, { retries: 1 } as never)).toThrow(/on\.index\("things"\): no option "retries"/);
  expect(() => on.startup(fn, { intervl: 1 } as never)).toThrow(/on\.startup: no option "intervl"/);
  // Each activity its own: cacheFor is on.probe's; retries and the rest on.startup's, refused elsewhere with why.
  expect(() => on.startup(fn, { cacheFor: 5 } as never)).toThrow(/^on\.startup: no option "cacheFor" \(its options: id, retries, backoff, timeout, errors\)$/);
  expect(() => on.cleanup(fn, { cacheFor: 5 } as never)).toThrow(/^on\.cleanup: no option "cacheFor" \(its options: id\)$/);
  expect(() => on.login(fn as never, { cacheFor: 5 } as never)).toThrow(/on\.login: no option "cacheFor"/);
  expect(() => on.cleanup(fn, { retries: 3 } as never)).toThrow(/only on\.startup is retried/);
  expect(() => on.validate("things", fn, { failurePolcy: "Fail" } as never)).toThrow(/no option "failurePolcy"; did you mean "failurePolicy"/);
});

test("options that are not an object are refused by what they are", () => {
  const { on } = new Registry();
  expect(() => on.create("things", fn, null as never)).toThrow(/on\.create\("things"\): the options are an object like \{ id: "\.\.\." \}, not null/);
  expect(() => on.reconcile("things", fn, ["x"] as never)).toThrow(/the options are an object/);
});

test("every documented option of every kind is taken", () => {
  const { on } = new Registry();
  const filters = { labels: { app: "x" }, annotations: {}, when: () => true, field: "spec.size", value: 1 };
  on.create("a", fn, { id: "c", retries: 1, backoff: 1, timeout: 1, errors: "temporary", sensitive: ["spec.x"], children: ["configmaps"], ...filters });
  on.update("a", fn, { id: "u", old: 1, new: 2, ...filters });
  on.delete("a", fn, { id: "d", optional: true });
  on.resume("a", fn, { id: "r" });
  on.field("a", { field: "spec.size", value: 1, old: 1, new: 2, id: "f" }, fn);
  on.event("a", fn, { id: "e", children: ["configmaps"], ...filters });
  on.daemon("a", fn, { id: "dm", initialDelay: 1, backoff: 1, finalizer: true, cancellationTimeout: 1, cancellationBackoff: 1, errors: "ignored", retries: 1, children: [], ...filters });
  on.timer("a", fn, { id: "t", interval: 1, idle: 1, sharp: true, initialDelay: 1, ...filters });
  on.index("a", fn, { id: "i", ...filters });
  on.reconcile("b", fn, { id: "rc", owns: ["configmaps"], watches: [], on: "any", finalizer: true, timeout: 1, when: () => true });
  on.startup(fn, { id: "s", retries: 1, backoff: 1, timeout: 1, errors: "permanent" });
  on.probe(fn, { id: "p", cacheFor: 1 });
  on.validate("a", fn, { id: "v", operations: ["CREATE"], failurePolicy: "Ignore", sideEffects: "None", timeoutSeconds: 5, subresources: [], matchConditions: [], labels: {}, field: "spec.size", value: 1 });
});

test("a message names the resource as the selector it was given, quoted, a token as its selector", () => {
  const { on } = new Registry();
  const token = { group: "example.com", version: "v1", plural: "widgets" };
  expect(() => on.reconcile(token, fn, { labels: {} } as never)).toThrow(/^on\.reconcile\("widgets\.example\.com\/v1"\): /);
  expect(() => on.create(token, fn, { retires: 1 } as never)).toThrow(/^on\.create\("widgets\.example\.com\/v1"\): /);
  expect(() => on.index({ version: "v1", plural: "pods" }, fn, { idd: "x" } as never)).toThrow(/^on\.index\("v1\/pods"\): /);
});

test("on.convert takes no options: a third argument is refused, not dropped", () => {
  const { on } = new Registry();
  const convert = (body: KubeObject) => body;
  expect(() => (on.convert as (...args: unknown[]) => void)("widgets.example.com", convert, { id: "c" })).toThrow(
    /^on\.convert\("widgets\.example\.com"\): it takes no options$/,
  );
  on.convert("widgets.example.com", convert);
});
