// filters.md: a predicate or `when` is the user's code, called with the handler's context. One
// that throws fails the object's cycle (retried with the object's backoff); the error logged must
// say whose filter it was, not only the predicate's own message.

import { test } from "bun:test";
import { Registry } from "kobun";
import { startOperator } from "kobun/testing";

test("a `when` that throws is logged naming its handler", async () => {
  const registry = new Registry();
  registry.on.create("v1/configmaps", () => {}, { id: "fragile", when: ({ spec }) => spec.nested.deep === 1 });
  await using kit = await startOperator({ registry, logLevel: "info", timeout: 15_000 });
  await kit.apply("v1/configmaps", { metadata: { name: "f" }, data: {} });
  await kit.logs.until(/could not process the object.*a filter of 'fragile' \(labels, annotations, value or when\) threw: /);
}, 30_000);
