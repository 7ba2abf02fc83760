// A child logger's lines carry its parents' fields and its own (merged when a line is written).

import { expect, test } from "bun:test";
import { Logger, memorySink } from "../../src/util/log.ts";

test("a grandchild's lines carry the root's, the child's and its own fields; a nearer field wins", () => {
  const sink = memorySink("info", "json");
  const root = new Logger(sink, { resource: "kex", name: "root" });
  const child = root.child({ namespace: "ns", name: "obj" });
  const grandchild = child.child({ handler: "create_fn" });
  grandchild.info("ran", { cause: "create" });
  child.info("child line");
  const [first, second] = sink.lines.map((line) => JSON.parse(line));
  expect(first).toMatchObject({ msg: "ran", resource: "kex", namespace: "ns", name: "obj", handler: "create_fn", cause: "create" });
  expect(second).toMatchObject({ msg: "child line", resource: "kex", namespace: "ns", name: "obj" });
  expect(second.handler).toBeUndefined();
  expect(grandchild.context).toEqual({ resource: "kex", name: "obj", namespace: "ns", handler: "create_fn" });
});

test("a child made while its level is off writes nothing, and its context is still whole when read", () => {
  const sink = memorySink("warn", "plain");
  const child = new Logger(sink, { a: 1 }).child({ b: 2 });
  child.info("not written", { c: 3 });
  expect(sink.lines).toEqual([]);
  expect(child.context).toEqual({ a: 1, b: 2 });
  child.warn("written");
  expect(sink.lines[0]).toContain("written a=1 b=2");
});

test("a child's fields are those given when it was made: the caller changing its object after changes no line", () => {
  const sink = memorySink("info", "json");
  const fields = { step: 1 };
  const child = new Logger(sink, { root: "r" }).child(fields);
  fields.step = 2; // before its first line (the merge is lazy) ...
  child.info("first");
  fields.step = 3; // ... and after it
  child.info("second");
  expect(sink.lines.map((line) => JSON.parse(line).step)).toEqual([1, 1]);
});
