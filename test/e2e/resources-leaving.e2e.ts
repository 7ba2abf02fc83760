// Issue 20, on each target: an object relabelled out of resources.<key>.labelSelector leaves
// the operator's watch (kube-apiserver sends DELETED while the object lives on); kobun then
// releases the finalizer it held for its delete handlers, so deleting the object is not
// blocked for ever. In-process run() against the target.

import { describe, expect, test } from "bun:test";
import { parseConfigText, resolveSettings } from "../../src/config/index.ts";
import { FINALIZER, Registry } from "../../src/declaring/index.ts";
import { KubeClient } from "../../src/kube/client.ts";
import type { Resource } from "../../src/kube/types.ts";
import { run } from "../../src/runtime/operator.ts";
import { memorySink, Logger } from "../../src/util/log.ts";
import { createNamespace } from "./harness/kube.ts";
import { targetSuite } from "./harness/suite.ts";
import { selectedTargets, type TargetName } from "./harness/target.ts";

const CONFIGMAPS: Resource = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false };

describe.each(selectedTargets())("an object leaving a resource's labelSelector against %s", (targetName: TargetName) => {
  const need = targetSuite(targetName, { crds: [], cleanup: [] });

  test("its finalizer is released when it is relabelled out of the selector, so its deletion goes through", async () => {
    const target = need();
    const ns = await createNamespace(target.client, "e2e-leave");
    const finalizers = async () => {
      try {
        return (await target.client.get(CONFIGMAPS, ns, "leaving")).metadata.finalizers ?? [];
      } catch (error) {
        if ((error as { code?: number }).code === 404) return undefined;
        throw error;
      }
    };
    const until = async (wanted: (f: string[] | undefined) => boolean, what: string) => {
      const deadline = Date.now() + 20_000;
      while (!wanted(await finalizers())) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await Bun.sleep(50);
      }
    };
    const settings = resolveSettings({
      fileData: parseConfigText(`peering: { standalone: true }\nnamespaces: { include: [${ns}] }\nresources:\n  v1/configmaps: { labelSelector: app=web }\n`, "kobun.yaml"),
    });
    const registry = new Registry();
    registry.on.delete("v1/configmaps", () => {}, { id: "on-delete" });
    const client = await KubeClient.connect({ kubeconfig: target.kubeconfigPath });
    const stop = new AbortController();
    const { promise: started, resolve: onStarted } = Promise.withResolvers<void>();
    const running = run({ signal: stop.signal, settings, client, registry, logger: new Logger(memorySink("error")), onStarted: () => onStarted() });
    try {
      await started;
      await target.client.create(CONFIGMAPS, ns, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "leaving", labels: { app: "web" } } });
      await until((f) => f?.includes(FINALIZER) ?? false, "the operator's finalizer on the matching object");
      await target.client.patch(CONFIGMAPS, ns, "leaving", { metadata: { labels: { app: "db" } } });
      await until((f) => f !== undefined && !f.includes(FINALIZER), "the finalizer released once the object left the selector");
      await target.client.delete(CONFIGMAPS, ns, "leaving");
      await until((f) => f === undefined, "the object gone after its deletion");
    } finally {
      stop.abort();
      await running;
      client.close();
    }
  }, 60_000);
});
