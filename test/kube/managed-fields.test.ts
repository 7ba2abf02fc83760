import { describe, expect, test } from "bun:test";
import { withoutManagedFields } from "../../src/kube/managed-fields.ts";

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
