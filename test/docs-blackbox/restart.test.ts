// testing.md's "Underneath" (startSandbox + run(), as its example writes them) used for what the kit
// cannot do, a restart of the operator against the same API server: on.resume runs for an object
// handled before (Kopf's), not for one created while the operator was down, whose create runs; an
// object deleted meanwhile gets its delete handlers; and (indexes.md) a handler at start-up sees an
// index holding every object already there.

import { expect, test } from "bun:test";
import { Registry } from "kobun";
import { startSandbox } from "kobun/sandbox";
import { operator, within } from "./helpers.ts";

const base = (url: string) => `${url}/api/v1/namespaces/default/configmaps`;

async function createConfigMap(url: string, name: string): Promise<void> {
  const response = await fetch(base(url), {
    method: "POST", headers: { "content-type": "application/json" },
    // data not empty: an empty map is not stored (Go's omitempty), so a later data.v would be all of data
    body: JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data: { v: "1" } }),
  });
  expect(response.status).toBe(201);
}

/** Resolves once the ConfigMap is gone: a GET, then a WATCH from its resourceVersion until DELETED. */
async function deletion(url: string, name: string): Promise<void> {
  const now = await fetch(`${base(url)}/${name}`);
  if (now.status === 404) return;
  const { metadata } = await now.json() as { metadata: { resourceVersion: string } };
  const watch = await fetch(`${base(url)}?watch=1&fieldSelector=metadata.name%3D${name}&resourceVersion=${metadata.resourceVersion}`);
  const reader = watch.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the watch of ${name} ended before its deletion`);
    buffered += value;
    if (buffered.includes('"type":"DELETED"')) return void reader.cancel();
  }
}


/** A sandbox and a registry recording create, resume and delete calls; `handled` runs one operator until `name` is created. */
async function world() {
  const sandbox = await startSandbox();
  const calls: string[] = [];
  const registry = new Registry();
  registry.on.create("v1/configmaps", ({ name }) => { calls.push(`create ${name}`); }, { id: "create_fn" });
  registry.on.resume("v1/configmaps", ({ name }) => { calls.push(`resume ${name}`); }, { id: "resume_fn" });
  registry.on.delete("v1/configmaps", ({ name }) => { calls.push(`delete ${name}`); }, { id: "delete_fn" });
  registry.on.update("v1/configmaps", ({ name, diff }) => {
    calls.push(`update ${name} ${diff.map((d) => `${d.path.join(".")}=${String(d.new)}`).join(",")}`);
  }, { id: "update_fn" });
  const handled = async (name: string) => {
    const first = operator(sandbox.kubeconfigPath, registry);
    await first.logs.until(/operator ready/, { timeout: 15_000 });
    await createConfigMap(sandbox.url, name);
    await first.logs.until(new RegExp(`Handler 'create_fn' succeeded\\..*name=${name}`), { timeout: 15_000 });
    await first.stop();
  };
  return { sandbox, calls, registry, handled, [Symbol.asyncDispose]: () => sandbox.stop() };
}

test("after a restart, on.resume runs for the objects handled before, on.create for one made meanwhile, each once", async () => {
  await using w = await world();
  await w.handled("old");
  await createConfigMap(w.sandbox.url, "new");
  const second = operator(w.sandbox.kubeconfigPath, w.registry);
  await second.logs.until(/Handler 'resume_fn' succeeded\..*name=old/, { timeout: 15_000 });
  await second.logs.until(/Handler 'create_fn' succeeded\..*name=new/, { timeout: 15_000 });
  await second.stop();
  expect(w.calls.sort()).toEqual(["create new", "create old", "resume old"]);
}, 45_000);

test("an object changed while the operator was down: on.resume is mixed into that update, in one cycle", async () => {
  await using w = await world();
  await w.handled("changed");
  const patched = await fetch(`${base(w.sandbox.url)}/changed`, {
    method: "PATCH", headers: { "content-type": "application/merge-patch+json" }, body: JSON.stringify({ data: { v: "2" } }),
  });
  expect(patched.status).toBe(200);
  const second = operator(w.sandbox.kubeconfigPath, w.registry);
  const resumed = await second.logs.until(/Handler 'resume_fn' succeeded\..*name=changed/, { timeout: 15_000 });
  await second.logs.until(/Handler 'update_fn' succeeded\..*name=changed/, { timeout: 15_000 });
  await second.stop();
  expect(resumed).toContain("cause=update");
  expect(w.calls.sort()).toEqual(["create changed", "resume changed", "update changed data.v=2"]);
}, 45_000);

test("an object deleted while the operator was down: its delete handlers run at the restart, not resume (Kopf's deleted=False)", async () => {
  await using w = await world();
  await w.handled("going");
  const deleted = await fetch(`${base(w.sandbox.url)}/going`, { method: "DELETE" });
  expect(deleted.status).toBe(200);                       // held by kobun's finalizer
  const second = operator(w.sandbox.kubeconfigPath, w.registry);
  await second.logs.until(/Handler 'delete_fn' succeeded\..*name=going/, { timeout: 15_000 });
  const gone = await within(deletion(w.sandbox.url, "going"), 15_000, "the object's removal").catch((e: unknown) => e);
  await second.stop();
  expect(gone).toBeUndefined();
  expect(w.calls).toEqual(["create going", "delete going"]);
}, 45_000);

test("at start-up no handler runs before every index's first LIST: a handler sees every object already there", async () => {
  await using w = await world();
  for (const name of ["one", "two", "three"]) await createConfigMap(w.sandbox.url, name);
  const secret = await fetch(`${w.sandbox.url}/api/v1/namespaces/default/secrets`, {
    method: "POST", headers: { "content-type": "application/json" },
    body: JSON.stringify({ apiVersion: "v1", kind: "Secret", metadata: { name: "first" }, type: "Opaque" }),
  });
  expect(secret.status).toBe(201);
  const registry = new Registry();
  registry.on.index("v1/configmaps", ({ name }) => ({ all: name }), { id: "configMaps" });
  const seen: number[] = [];
  registry.on.create("v1/secrets", ({ indexes }) => { seen.push(indexes.configMaps!.get("all").length); }, { id: "reader" });
  const running = operator(w.sandbox.kubeconfigPath, registry);
  await running.logs.until(/Handler 'reader' succeeded\..*name=first/, { timeout: 15_000 });
  await running.stop();
  expect(seen).toEqual([3]);
}, 45_000);
