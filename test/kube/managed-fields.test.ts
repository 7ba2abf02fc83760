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

  test("what surrounds the list's end, written inside a string, is not taken for it", () => {
    // Field managers are named by their clients; fieldsV1 keys by a custom resource's fields.
    const strings = [{ ...managed[0], manager: 'x}],"', fieldsV1: { 'f:a}]},"': {}, "f:b}],": {}, "f:c}]}}": {} } }];
    expect(cut(object({ name: "a", managedFields: strings, uid: "u" }), "object")).toEqual(object({ name: "a", uid: "u" }));
    // A built-in kind's metadata (fields in the API's order, managedFields last), in an event and alone.
    const builtIn = { kind: "ConfigMap", apiVersion: "v1", metadata: { name: "c", uid: "u", managedFields: strings }, data: { k: "v" } };
    const { managedFields: _cut, ...slim } = builtIn.metadata;
    expect(cut({ type: "ADDED", object: builtIn }, "event")).toEqual({ type: "ADDED", object: { ...builtIn, metadata: slim } });
    // Metadata last in the object: its end is found by scanning.
    const last = { kind: "Namespace", apiVersion: "v1", metadata: { name: "n", managedFields: strings } };
    expect(cut({ type: "ADDED", object: last }, "event")).toEqual({ type: "ADDED", object: { ...last, metadata: { name: "n" } } });
    // … and when more follows the object, its lists' ends are not taken for the metadata's.
    const more = { type: "ADDED", object: last, more: { list: [{}], next: 1 } };
    expect(cut(more, "event")).toEqual({ ...more, object: { ...last, metadata: { name: "n" } } });
  });

  test("a key written as the sentinel the metadata check uses is walked past as before", () => {
    const value = object({ "": 0, managedFields: managed, name: "a" });
    expect(cut(value, "object")).toEqual(object({ "": 0, name: "a" }));
    const spec = { apiVersion: "v1", kind: "Thing", metadata: { "": 0, name: "a" }, spec: { managedFields: [1] } };
    expect(withoutManagedFields(JSON.stringify(spec), "object")).toBe(JSON.stringify(spec));
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
  // A list in an entry whose "]" follows a "}" and comes before a key: the cut ends there, does not parse, and the
  // whole text is kept.
  const odd = object({ name: "a", managedFields: [{ manager: "m", extra: [{}], more: 1 }, { manager: "n" }] });
  expect(withoutManagedFields(JSON.stringify(odd), "object")).not.toBe(JSON.stringify(odd));
  expect(parseWithoutManagedFields(JSON.stringify(odd), "object")).toEqual(odd);
  // Also when the inner list's "]" is followed by the entry's end: the text is kept whole, not cut wrong.
  const ending = object({ name: "a", managedFields: [{ manager: "m", extra: [{}] }, { manager: "n" }] });
  expect(parseWithoutManagedFields(JSON.stringify(ending), "object")).toEqual(ending);
  // Texts no API server writes, whose list's end is not what the fast path looks for, with a list of the same
  // depth later on: an entry that is not an object, a space before the "]", a next key that starts with "}", or
  // with spaces; and an empty key, written spaced, before the key. The cut never ends past the list.
  const later = '"spec":{"a":[{}],"b":2}';
  for (const text of [
    `{"metadata":{"managedFields":[{},1],"name":"a"},${later}}`,
    `{"metadata":{"managedFields":[{"manager":"m"} ],"name":"a"},${later}}`,
    `{"metadata":{"managedFields":[{"manager":"m"}],"}":1},${later}}`,
    `{"type":"ADDED","object":{"metadata":{"managedFields":[{"m":"a"}]},"  spec":{"l":[{}],"z":1}}}`,
    `{"metadata":{"" :0},"spec":{"managedFields":[{"a":1}],"x":1}}`,
  ]) {
    const shape = text.startsWith('{"type"') ? "event" : "object";
    const whole = JSON.parse(text);
    const cut = structuredClone(whole);
    delete (shape === "event" ? cut.object.metadata : cut.metadata).managedFields;
    const parsed = parseWithoutManagedFields(text, shape);
    expect(Bun.deepEquals(parsed, whole) || Bun.deepEquals(parsed, cut)).toBe(true);
  }
  expect(() => parseWithoutManagedFields("not json", "event")).toThrow();
});

test("withoutManagedFields: objects as the API server writes them, with strings made of JSON's own characters", () => {
  // A fixed seed: the same 3,000 objects every run; managedFields anywhere in metadata, other fields before and after
  // it, strings and keys full of quotes, brackets, colons and commas.
  let seed = 7;
  const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % n);
  const alphabet = 'ab}]{[",:\\ \n';
  const text = () => Array.from({ length: random(6) }, () => alphabet[random(alphabet.length)]).join("");
  const fields = (depth: number): Record<string, unknown> =>
    Object.fromEntries(Array.from({ length: random(3) }, () => [`f:${text()}`, depth > 0 ? fields(depth - 1) : {}]));
  const entry = () => ({ manager: text(), operation: "Update", apiVersion: "v1", fieldsType: "FieldsV1", fieldsV1: fields(3) });
  const values = [text, () => random(9), (depth: number) => [value(depth - 1), { [text()]: text() }], (depth: number) => ({ [text()]: value(depth - 1) })];
  const value = (depth: number): unknown => values[random(depth > 0 ? 4 : 2)]!(depth);
  const shuffled = (pairs: [string, unknown][]) => Object.fromEntries(pairs.sort(() => random(3) - 1));
  for (let i = 0; i < 3000; i++) {
    const list = Array.from({ length: 1 + random(3) }, entry);
    const others: [string, unknown][] = [["name", text()], ["labels", { [text()]: text() }], ["ownerReferences", [{ uid: text() }]]];
    const slimMeta = shuffled(others.slice(0, random(4)));
    const meta = shuffled([...Object.entries(slimMeta), ["managedFields", list]]);
    // What the API server writes before the metadata (a custom resource's keys are sorted) and after it.
    const before = shuffled(([["apiVersion", "v1"], ["kind", text()], ["data", value(3)]] as [string, unknown][]).slice(0, random(4)));
    const after = ([["spec", value(3)], ["status", { managedFields: list }]] as [string, unknown][]).slice(0, random(3));
    const object = { ...before, metadata: meta, ...Object.fromEntries(after) };
    const slim = { ...object, metadata: slimMeta };
    const event = random(2) === 0;
    const written = JSON.stringify(event ? { type: "ADDED", object } : object);
    const cut = JSON.parse(withoutManagedFields(written, event ? "event" : "object"));
    expect(cut).toEqual(event ? { type: "ADDED", object: slim } : slim);
  }
});
