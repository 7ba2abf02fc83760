// Issue 20 end to end, on each target (the rest of resources.e2e.ts): kobun.yaml's
// resources.<key>.version serves another version of a CRD (the operator receives its objects
// in v1beta1); metadataOnly: the API server's PartialObjectMetadata answers (the sandbox
// must give exactly what kube-apiserver gives), and what the operator received has no spec;
// per-resource namespaces: a resource watched in other namespaces than the global ones.
// In-process run() against the target.

import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { parseConfigText, resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/index.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { ApiError } from "../../src/kube/errors.ts";
import { METADATA_LIST, METADATA_OBJECT } from "../../src/kube/partial.ts";
import type { KubeObject, Resource } from "../../src/kube/types.ts";
import { run } from "../../src/runtime/operator.ts";
import { memorySink, Logger } from "../../src/util/log.ts";
import { createNamespace, rawWatch } from "./harness/kube.ts";
import { targetSuite } from "./harness/suite.ts";
import { selectedTargets, type TargetName } from "./harness/target.ts";

const ROOT = join(import.meta.dir, "..", "..");
const CONFIGMAPS: Resource = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false };
const GADGETS: Resource = { group: "e2e.kobun.dev", version: "v1", plural: "kobungadgets", kind: "KobunGadget", namespaced: true, statusSubresource: true };

/** Runs the operator with `registry` and `yaml`; once started, `then()` (bounded); then stops it. */
async function operate(kubeconfigPath: string, yaml: string, registry: Registry, then: () => Promise<void>, what: () => string): Promise<void> {
  const settings = resolveSettings({ fileData: parseConfigText(`peering: { standalone: true }\n${yaml}`, "kobun.yaml") });
  const client = await KubeClient.connect({ kubeconfig: kubeconfigPath });
  const stop = new AbortController();
  const { promise: started, resolve: onStarted } = Promise.withResolvers<void>();
  const running = run({ signal: stop.signal, settings, client, registry, logger: new Logger(memorySink("error")), onStarted: () => onStarted() });
  let timer: Timer | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`not received in time: ${what()}`)), 30_000)));
  try {
    await Promise.race([started.then(then), late, running.then(() => Promise.reject(new Error("the operator stopped")))]);
  } finally {
    clearTimeout(timer);
    stop.abort();
    await running;
    client.close();
  }
}

describe.each(selectedTargets())("resources in kobun.yaml, more, against %s", (targetName: TargetName) => {
  const need = targetSuite(targetName, { crds: [join(ROOT, "test/e2e/handlers/kobungadget.crd.yaml")], cleanup: [] });

  test("version: v1beta1 of a CRD serving v1 and v1beta1: the operator receives its objects in v1beta1", async () => {
    const target = need();
    const ns = await createNamespace(target.client, "e2e-ver");
    await target.client.create(GADGETS, ns, { apiVersion: "e2e.kobun.dev/v1", kind: "KobunGadget", metadata: { name: "old" }, spec: { size: 1 } });
    const received = new Map<string, string>();
    const { promise: both, resolve } = Promise.withResolvers<void>();
    const registry = new Registry();
    registry.on.event("kobungadgets.e2e.kobun.dev", ({ name, body }) => {
      received.set(name, body.apiVersion!);
      if (received.has("old") && received.has("new")) resolve();
    }, { id: "every-event" });
    await operate(target.kubeconfigPath, `namespaces: { include: [${ns}] }\nresources:\n  kobungadgets.e2e.kobun.dev: { version: v1beta1 }\n`, registry, async () => {
      // After start: through the WATCH (the LIST brought "old").
      await target.client.create(GADGETS, ns, { apiVersion: "e2e.kobun.dev/v1", kind: "KobunGadget", metadata: { name: "new" }, spec: { size: 2 } });
      await both;
    }, () => JSON.stringify([...received]));
    expect(Object.fromEntries(received)).toEqual({ old: "e2e.kobun.dev/v1beta1", new: "e2e.kobun.dev/v1beta1" });
    console.log(`e2e ${targetName}: resources version received=${JSON.stringify(Object.fromEntries(received))}`);
  }, 60_000);

  test("PartialObjectMetadata: LIST, WATCH and GET answers, and the 406 for the wrong kind, as kube-apiserver gives them", async () => {
    const target = need();
    const ns = await createNamespace(target.client, "e2e-pom");
    await target.client.create(CONFIGMAPS, ns, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "probe", labels: { a: "b" } }, data: { k: "v" } });
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    const list = await target.client.request<any>("GET", path, { accept: METADATA_LIST });
    expect([list.kind, list.apiVersion, typeof list.metadata.resourceVersion]).toEqual(["PartialObjectMetadataList", "meta.k8s.io/v1", "string"]);
    expect(list.items.map((item: any) => [Object.keys(item).sort(), item.kind, item.apiVersion, item.metadata.name, item.metadata.labels])).toEqual([
      [["apiVersion", "kind", "metadata"], "PartialObjectMetadata", "meta.k8s.io/v1", "probe", { a: "b" }],
    ]);
    const one = await target.client.request<any>("GET", `${path}/probe`, { accept: METADATA_OBJECT });
    expect([one.kind, one.apiVersion, one.data]).toEqual(["PartialObjectMetadata", "meta.k8s.io/v1", undefined]);
    const wrong = await target.client.request("GET", path, { accept: METADATA_OBJECT }).catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(ApiError);
    expect([(wrong as ApiError).code, (wrong as ApiError).message]).toEqual([406, expect.stringContaining("you requested PartialObjectMetadata, but the requested object is a list (*core.ConfigMapList)")]);
    const watch = await rawWatch(target.client, path, { sendInitialEvents: "true", resourceVersionMatch: "NotOlderThan", allowWatchBookmarks: "true" }, {
      accept: METADATA_OBJECT, until: (event) => event.type === "BOOKMARK",
    });
    expect(watch.events.map((event) => [event.type, event.object.kind, event.object.apiVersion, event.object.metadata.name ?? null, event.object.data])).toEqual([
      ["ADDED", "PartialObjectMetadata", "meta.k8s.io/v1", "probe", undefined],
      ["BOOKMARK", "PartialObjectMetadata", "meta.k8s.io/v1", null, undefined],
    ]);
  }, 60_000);

  test("metadataOnly: true: what the operator received has metadata and no data, as ConfigMaps", async () => {
    const target = need();
    const ns = await createNamespace(target.client, "e2e-meta");
    const configmap = (name: string) => target.client.create(CONFIGMAPS, ns, { apiVersion: "v1", kind: "ConfigMap", metadata: { name, labels: { app: "web" } }, data: { big: "x".repeat(2000) } });
    await configmap("listed");
    const received = new Map<string, KubeObject>();
    const { promise: both, resolve } = Promise.withResolvers<void>();
    const registry = new Registry();
    registry.on.event("v1/configmaps", ({ name, body }) => {
      received.set(name, body);
      if (received.has("listed") && received.has("watched")) resolve();
    }, { id: "every-event" });
    await operate(target.kubeconfigPath, `namespaces: { include: [${ns}] }\nresources:\n  v1/configmaps: { metadataOnly: true }\n`, registry, async () => {
      await configmap("watched");
      await both;
    }, () => [...received.keys()].join(","));
    for (const name of ["listed", "watched"]) {
      const body = received.get(name)!;
      expect([body.apiVersion, body.kind, body.metadata.name, body.metadata.labels, Object.keys(body).sort()]).toEqual(["v1", "ConfigMap", name, { app: "web" }, ["apiVersion", "kind", "metadata"]]);
    }
    console.log(`e2e ${targetName}: metadataOnly received keys=${Object.keys(received.get("watched")!).sort().join(",")}`);
  }, 60_000);

  test("namespaces of its own: secrets watched in their namespace only, configmaps in the global one only", async () => {
    const target = need();
    const global = await createNamespace(target.client, "e2e-nsg");
    const own = await createNamespace(target.client, "e2e-nso");
    const SECRETS: Resource = { ...CONFIGMAPS, plural: "secrets", kind: "Secret" };
    const make = (resource: Resource, ns: string, name: string) => target.client.create(resource, ns, { apiVersion: "v1", kind: resource.kind, metadata: { name } });
    for (const ns of [global, own]) {
      await make(CONFIGMAPS, ns, "cm-before");
      await make(SECRETS, ns, "secret-before");
    }
    const received = new Set<string>();
    const { promise: last, resolve } = Promise.withResolvers<void>();
    const registry = new Registry();
    const seen = ({ namespace, name }: { namespace: string | undefined; name: string }) => {
      received.add(`${namespace === global ? "global" : namespace === own ? "own" : namespace}/${name}`);
      if (received.has("global/cm-last") && received.has("own/secret-last")) resolve();
    };
    registry.on.event("v1/configmaps", seen, { id: "cms" });
    registry.on.event("v1/secrets", seen, { id: "secrets" });
    await operate(target.kubeconfigPath, `namespaces: { include: [${global}] }\nresources:\n  v1/secrets: { namespaces: { include: [${own}] } }\n`, registry, async () => {
      // Through the WATCHes: the unwatched ones first, so that by the last ones they would have arrived.
      await make(CONFIGMAPS, own, "cm-late");
      await make(SECRETS, global, "secret-late");
      await make(SECRETS, own, "secret-last");
      await make(CONFIGMAPS, global, "cm-last");
      await last;
    }, () => [...received].join(","));
    expect([...received].filter((key) => !key.endsWith("/kube-root-ca.crt") && !key.includes("default-token")).sort()).toEqual(["global/cm-before", "global/cm-last", "own/secret-before", "own/secret-last"]);
    console.log(`e2e ${targetName}: resources namespaces received=${[...received].sort().join(",")}`);
  }, 60_000);
});
