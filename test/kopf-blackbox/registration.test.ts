// Options a Kopf user carries over, checked at registration as the docs' rules say: `errors` is one
// of "temporary", "permanent", "ignored" (Kopf's ErrorsMode), `retries` counts attempts. A value
// outside them (a typo, Kopf's "IGNORED", 2.5 attempts) must be refused naming it, not taken
// silently for the default, which would retry for ever what the user meant to ignore.

import { expect, test } from "bun:test";
import { Registry } from "kobun";

const CM = "v1/configmaps";

test("errors: an unknown mode is refused, naming it, on every retried kind", () => {
  const registry = new Registry();
  const wrong = { errors: "IGNORED" } as unknown as { errors: "ignored" };
  expect(() => registry.on.create(CM, () => {}, { id: "c", ...wrong }))
    .toThrow(`handler c: errors must be "temporary", "permanent" or "ignored", not "IGNORED"`);
  expect(() => registry.on.daemon(CM, () => {}, { id: "d", ...wrong })).toThrow(/^daemon d: errors must be/);
  expect(() => registry.on.timer(CM, () => {}, { id: "t", interval: 1, ...wrong })).toThrow(/^timer t: errors must be/);
  expect(() => registry.on.startup(() => {}, { id: "s", ...wrong })).toThrow(/^startup s: errors must be/);
  for (const errors of ["temporary", "permanent", "ignored"] as const) {
    expect(() => registry.on.update(CM, () => {}, { id: `u-${errors}`, errors })).not.toThrow();
  }
});

test("retries counts attempts: a fraction is refused as 0 is", () => {
  const registry = new Registry();
  expect(() => registry.on.create(CM, () => {}, { id: "c", retries: 2.5 }))
    .toThrow("handler c: retries must be a whole number ≥ 1 (attempts), not 2.5");
  expect(() => registry.on.create(CM, () => {}, { id: "z", retries: 0 })).toThrow(/retries must be a whole number ≥ 1/);
  expect(() => registry.on.daemon(CM, () => {}, { id: "d", retries: 1.5 })).toThrow(/^daemon d: retries must be/);
  expect(() => registry.on.create(CM, () => {}, { id: "ok", retries: 3 })).not.toThrow();
});

test("timeout: 0 is refused (the handler would fail before its first call), as handling.timeout's 0 is", () => {
  const registry = new Registry();
  expect(() => registry.on.create(CM, () => {}, { id: "c", timeout: 0 }))
    .toThrow("handler c: timeout must be a number of seconds > 0 (leave it out for none)");
  expect(() => registry.on.startup(() => {}, { id: "s", timeout: 0 })).toThrow(/^startup s: timeout must be a number of seconds > 0/);
  expect(() => registry.on.create(CM, () => {}, { id: "ok", timeout: 0.5, backoff: 0 })).not.toThrow();
});
