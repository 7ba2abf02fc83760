// The 403 rule alone (forbidden.ts): when a forbidden watch ends the operator.

import { expect, test } from "bun:test";
import { FORBIDDEN_LIMIT, ForbiddenRule } from "../../src/streams/forbidden.ts";
import { WatchError } from "../../src/watching/errors.ts";

const forbidden = new WatchError('forbidden: cannot watch configmaps in namespace "a"', { code: 403 });
const serverError = new WatchError("watch failed with ERROR 500", { code: 500 });
const added = { type: "added", object: { metadata: { name: "x" } } } as const;

test("a stream started with the operator is fatal at its first 403 if it never worked", () => {
  expect(() => new ForbiddenRule({ fatalAtOnce: true, healthyAfterMs: 60_000 }).failed(forbidden)).toThrow(/permissions lacking at start-up/);
});

test("other failures are never fatal", () => {
  const rule = new ForbiddenRule({ fatalAtOnce: true, healthyAfterMs: 60_000 });
  expect(() => {
    for (let i = 0; i < 3 * FORBIDDEN_LIMIT; i++) rule.failed(serverError);
  }).not.toThrow();
});

test("a stream of a namespace found by a glob is fatal only after FORBIDDEN_LIMIT 403s in a row", () => {
  const rule = new ForbiddenRule({ fatalAtOnce: false, healthyAfterMs: 60_000 });
  for (let i = 1; i < FORBIDDEN_LIMIT; i++) rule.failed(forbidden);
  expect(() => rule.failed(forbidden)).toThrow(`forbidden ${FORBIDDEN_LIMIT} times in a row`);
});

test("a change through the watch makes the stream one that worked, and restarts the count", () => {
  const rule = new ForbiddenRule({ fatalAtOnce: true, healthyAfterMs: 60_000 });
  rule.saw(added);
  for (let i = 1; i < FORBIDDEN_LIMIT; i++) rule.failed(forbidden);
  rule.saw(added);
  for (let i = 1; i < FORBIDDEN_LIMIT; i++) rule.failed(forbidden);
  expect(() => rule.failed(forbidden)).toThrow(`forbidden ${FORBIDDEN_LIMIT} times in a row`);
});

test("a stream up for the healthy period after a complete LIST worked, even if nothing changed", () => {
  const rule = new ForbiddenRule({ fatalAtOnce: true, healthyAfterMs: 0 });
  rule.saw({ type: "relist-done", resourceVersion: "1" });
  expect(() => rule.failed(forbidden)).not.toThrow(); // not fatal at once: the stream worked
  const unlisted = new ForbiddenRule({ fatalAtOnce: true, healthyAfterMs: 0 });
  unlisted.saw({ type: "relist-start" });
  expect(() => unlisted.failed(forbidden)).toThrow(/at start-up/);
});
