import { describe, expect, test } from "bun:test";
import { parseWithoutManagedFields, withoutManagedFields } from "../../src/kube/managed-fields.ts";

// What a real kube-apiserver writes for a custom resource (keys sorted, no spaces), fieldsV1
// keys with escaped quotes and brackets included.
const managed = [
  { apiVersion: "kobun.dev/v1", fieldsType: "FieldsV1", fieldsV1: { "f:metadata": { "f:finalizers": { ".": {}, 'v:"kobun.dev/finalizer"': {} } }, "f:spec": { ".": {}, "f:size": {} } }, manager: "kobun", operation: "Update", time: "2026-12-01T22:00:00Z" },
  { apiVersion: "kobun.dev/v1", fieldsType: "FieldsV1", fieldsV1: { "f:status": { 'k:{"type":"Ready"}': { ".": {}, "f:]": {} } } }, manager: "kobun", operation: "Update", subresource: "status", time: "2026-12-01T22:00:01Z" },
];
const object = (metadata: Record<string, unknown>, rest: Record<string, unknown> = {}) => ({ apiVersion: "kobun.dev/v1", kind: "KobunExample", metadata, spec: { size: 1 }, ...rest });
const meta = { creationTimestamp: "2026-12-01T22:00:00Z", finalizers: ["kobun.dev/finalizer"], generation: 1, managedFields: managed, name: "ex-1", namespace: "ns", resourceVersion: "42", uid: "u-1" };
const { managedFields: _dropped, ...slimMeta } = meta;

function cut(value: unknown, shape: "object" | "event"): unknown {
  return JSON.parse(withoutManagedFields(JSON.stringify(value), shape));
}

describe("withoutManagedFields", () => {
  test("an object's managedFields are cut from its text, the rest parses the same", () => {
    expect(cut(object(meta), "object")).toEqual(object(slimMeta));
  });

  test("a watch event's object loses its managedFields", () => {
    expect(cut({ type: "MODIFIED", object: object(meta) }, "event")).toEqual({ type: "MODIFIED", object: object(slimMeta) });
  });

  test("managedFields first, last or alone in metadata", () => {
    expect(cut(object({ managedFields: managed, name: "a" }), "object")).toEqual(object({ name: "a" }));
    expect(cut(object({ name: "a", managedFields: managed }), "object")).toEqual(object({ name: "a" }));
    expect(cut(object({ managedFields: managed }), "object")).toEqual(object({}));
  });

  test("fields before metadata (sorted keys of a custom resource) are walked past", () => {
    const value = { apiVersion: "v1", data: { a: '"managedFields":[', list: [{ metadata: { x: 1 } }] }, kind: "Thing", metadata: meta };
    expect(cut(value, "object")).toEqual({ ...value, metadata: slimMeta });
  });

  test("managedFields anywhere but the object's own metadata are kept", () => {
    const embedded = object({ name: "a" }, { template: { metadata: { managedFields: managed } } });
    expect(withoutManagedFields(JSON.stringify(embedded), "object")).toBe(JSON.stringify(embedded));
    // An object with an `object` field is not an event: its own metadata has none here.
    const inner = { apiVersion: "v1", kind: "Thing", object: { metadata: { managedFields: managed } } };
    expect(withoutManagedFields(JSON.stringify(inner), "object")).toBe(JSON.stringify(inner));
    // An event's object embedding metadata deeper down.
    const event = { type: "ADDED", object: { apiVersion: "v1", items: [{ metadata: { managedFields: managed } }], metadata: { name: "b" } } };
    expect(withoutManagedFields(JSON.stringify(event), "event")).toBe(JSON.stringify(event));
  });

  test("the list's end is its first \"]\" outside a string; an empty list; entries holding a list are scanned whole", () => {
    const tricky = [{ ...managed[0], fieldsV1: { "f:data": { "f:a]}]": {}, 'k:{"x":"]"}': {}, 'v:"}],\\"': {} } } }];
    expect(cut(object({ name: "a", managedFields: tricky, uid: "u" }), "object")).toEqual(object({ name: "a", uid: "u" }));
    expect(cut(object({ name: "a", managedFields: [], uid: "u" }), "object")).toEqual(object({ name: "a", uid: "u" }));
    // Not what an API server writes today: a list in an entry; its "]" follows a "}" only by chance, here not.
    const listed = [{ manager: "m", extra: [1, { "]": 2 }, 3], time: "t" }, { manager: "n", more: [[], [{}]] }];
    expect(cut(object({ name: "a", managedFields: listed, uid: "u" }), "object")).toEqual(object({ name: "a", uid: "u" }));
  });

  test("a scalar value under a key named metadata does not make the next object metadata", () => {
    const text = '{"metadata":"x","spec" :{"managedFields":[1]}}';
    expect(withoutManagedFields(text, "object")).toBe(text);
  });

  test("a string that only looks like the key is not cut", () => {
    const value = object({ name: "a", annotations: { note: '{"managedFields":[1]}' } });
    expect(withoutManagedFields(JSON.stringify(value), "object")).toBe(JSON.stringify(value));
  });

  test("text that is cut short, not JSON, or written with spaces is left as it is", () => {
    const whole = JSON.stringify(object(meta));
    const short = whole.slice(0, whole.indexOf('"manager"')); // inside managedFields
    expect(withoutManagedFields(short, "object")).toBe(short);
    expect(withoutManagedFields("not json", "object")).toBe("not json");
    const spaced = JSON.stringify(object(meta), null, 1);
    expect(withoutManagedFields(spaced, "object")).toBe(spaced);
    expect(withoutManagedFields('{"metadata":{"managedFields":null}}', "object")).toBe('{"metadata":{"managedFields":null}}');
  });
});

test("parseWithoutManagedFields: a cut that does not parse is parsed whole, no field lost", () => {
  // The process's first texts are left whole (LEFT_WHOLE); past them, texts are cut.
  for (let i = 0; i < 1000; i++) parseWithoutManagedFields("{}", "object");
  expect(parseWithoutManagedFields(JSON.stringify(object(meta)), "object")).toEqual(object(slimMeta));
  // A list in an entry whose "]" follows a "}": the cut ends there, does not parse, and the whole text is kept.
  const odd = object({ name: "a", managedFields: [{ manager: "m", extra: [{}] }, { manager: "n" }] });
  expect(withoutManagedFields(JSON.stringify(odd), "object")).not.toBe(JSON.stringify(odd));
  expect(parseWithoutManagedFields(JSON.stringify(odd), "object")).toEqual(odd);
  expect(() => parseWithoutManagedFields("not json", "event")).toThrow();
});
