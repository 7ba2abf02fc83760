// The repeats of list-type sets and maps (src/list-types.ts), checked as the apiextensions-apiserver checks them:
// the second sighting of a value is said, not the third; a key left out and a key given as null are apart; on an
// update, only when the stored object had no repeat (the CRD may have said list-type after it was stored). The
// wording on the wire is held to the real server by test/e2e/crd-validation.e2e.ts.

import { expect, test } from "bun:test";
import { listTypeErrors } from "../src/list-types.ts";

const schema = {
  type: "object",
  properties: {
    spec: {
      type: "object",
      properties: {
        kinds: { type: "array", "x-kubernetes-list-type": "set", items: { type: "string" } },
        ports: {
          type: "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
          items: { type: "object", properties: { name: { type: "string" }, port: { type: "integer" } } },
        },
        nested: {
          type: "object",
          additionalProperties: { type: "array", "x-kubernetes-list-type": "set", items: { type: "integer" } },
        },
      },
    },
  },
};
const said = (body: unknown, old?: unknown) => listTypeErrors(body, schema, old).map((c) => `${c.field}: ${c.message}`);

test("a value seen a second time is said at that index, a third time not again", () => {
  expect(said({ spec: { kinds: ["a", "a", "b", "a", "b"] } }))
    .toEqual(['spec.kinds[1]: Duplicate value: "a"', 'spec.kinds[4]: Duplicate value: "b"']);
  expect(said({ spec: { nested: { x: [1, 2, 1] } } })).toEqual(["spec.nested.x[2]: Duplicate value: 1"]);
});

test("a map's items by their keys: a key left out and a null one are apart; other fields do not count", () => {
  expect(said({ spec: { ports: [{ name: "a", port: 1 }, { name: "a", port: 2 }] } }))
    .toEqual(['spec.ports[1]: Duplicate value: {"name":"a"}']);
  expect(said({ spec: { ports: [{ port: 1 }, { name: null }] } })).toEqual([]);
  expect(said({ spec: { ports: [{ port: 1 }, { port: 2 }] } })).toEqual(["spec.ports[1]: Duplicate value: {}"]);
});

test("an update is checked only when the stored object had no repeat", () => {
  const repeated = { spec: { kinds: ["a", "a"] } };
  expect(said({ spec: { kinds: ["a", "a", "b"] } }, repeated)).toEqual([]);
  expect(said({ spec: { kinds: ["a", "a"] } }, { spec: { kinds: ["a"] } }))
    .toEqual(['spec.kinds[1]: Duplicate value: "a"']);
});
