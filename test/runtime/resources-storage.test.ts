// kobun.yaml's resources.<key>.storage: where progress and the diff base are written. For a
// resource with a status subresource "auto" keeps them in status.kobun; "annotations" puts
// them in kobun.dev/ annotations instead; "status" on a resource without a status
// subresource stops start-up with the entry named.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { Registry } from "../../src/declaring/index.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { parseConfigText, resolveSettings } from "../../src/config/index.ts";
import { run } from "../../src/runtime/operator.ts";
import { FatalError } from "../../src/runtime/exits.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { memorySink, Logger } from "../../src/util/log.ts";
import type { KubeObject } from "../../src/kube/types.ts";

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
  const schema = { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } };
  const response = await fetch(`${sandbox.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`, {
    method: "POST", headers: { "content-type": "application/json" },
    body: JSON.stringify({
      apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata: { name: "gadgets.kobun.dev" },
      spec: {
        group: "kobun.dev", scope: "Namespaced", names: { plural: "gadgets", singular: "gadget", kind: "Gadget" },
        versions: [{ name: "v1", served: true, storage: true, schema, subresources: { status: {} } }],
      },
    }),
  });
  expect(response.status).toBe(201);
});
afterAll(() => sandbox.stop());

const settingsWith = (resources: string) =>
  resolveSettings({ file: "kobun.yaml", fileData: parseConfigText(`peering: { standalone: true }\nnamespaces: { include: [default] }\nresources:\n${resources}`, "kobun.yaml") });

/** Runs the operator with one create handler on `selector` until it handled `name`; returns the object as stored then. */
async function handled(resources: string, selector: string, path: string, name: string, lastWrite: string): Promise<KubeObject> {
  const registry = new Registry();
  const { promise: done, resolve } = Promise.withResolvers<void>();
  registry.on.create(selector, () => {
    resolve();
    return { done: true };
  }, { id: "made" });
  const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  const stop = new AbortController();
  const running = run({ signal: stop.signal, settings: settingsWith(resources), client, registry, logger: new Logger(memorySink("error")) });
  try {
    // The request that carries the diff base is the cycle's last write (patching.ts).
    const written = sandbox.waitFor((r) => r.verb === "patch" && r.path === `${path}/${name}${lastWrite}`, 10_000);
    const created = await fetch(`${sandbox.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ apiVersion: "kobun.dev/v1", kind: "Gadget", metadata: { name }, spec: { a: 1 } }) });
    expect(created.status).toBe(201);
    await done;
    await written;
    stop.abort();
    await running;
    return (await (await fetch(`${sandbox.url}${path}/${name}`)).json()) as KubeObject;
  } finally {
    stop.abort();
    await running.catch(() => {});
    client.close();
  }
}

const GADGETS = "/apis/kobun.dev/v1/namespaces/default/gadgets";

test.each(["auto", "status"])("storage %s keeps progress and the diff base in status.kobun of a resource with a status subresource", async (storage) => {
  const object = await handled(`  gadgets.kobun.dev: { storage: ${storage} }`, "gadgets.kobun.dev", GADGETS, `${storage}-one`, "/status");
  expect(object.status?.kobun?.lastHandledConfiguration).toBeString();
  expect(Object.keys(object.metadata.annotations ?? {}).filter((key) => key.startsWith("kobun.dev/"))).toEqual([]);
}, 15_000);

test("storage annotations writes progress and the diff base to kobun.dev/ annotations, not to status", async () => {
  const object = await handled("  gadgets.kobun.dev: { storage: annotations }", "gadgets.kobun.dev", GADGETS, "annotated-one", "");
  expect(object.metadata.annotations?.["kobun.dev/last-handled-configuration"]).toBeString();
  expect(object.status?.kobun).toBeUndefined();
  // The handler's result still goes to its status field.
  expect(object.status?.made).toEqual({ done: true });
}, 15_000);

test("storage status on a resource without a status subresource stops start-up, naming the entry", async () => {
  const registry = new Registry();
  registry.on.create("v1/configmaps", () => {}, { id: "cm" });
  const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  const error = await run({ settings: settingsWith("  v1/configmaps: { storage: status }"), client, registry, logger: new Logger(memorySink("error")) })
    .catch((e: unknown) => e)
    .finally(() => client.close());
  expect(error).toBeInstanceOf(FatalError);
  expect((error as FatalError).message).toBe('kobun.yaml:4: resources.v1/configmaps.storage: "status" needs a status subresource, and the API server serves configmaps without one; use "annotations" or "auto"');
}, 15_000);
