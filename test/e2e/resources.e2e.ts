// Issue 20 end to end, on each target: kobun.yaml's resources: entry for configmaps sends its
// labelSelector and fieldSelector with the LIST and the WATCH, so the API server keeps
// unmatching objects out of what the operator receives (an unfiltered on.event sees every
// event the operator got; on the sandbox the request log shows the queries too); an entry
// with enabled: false leaves its resource unwatched. In-process run() against the target.

import { describe, expect, test } from "bun:test";
import { parseConfigText, resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/index.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { resourceName, type Resource } from "../../src/kube/types.ts";
import { run } from "../../src/runtime/operator.ts";
import { memorySink, Logger } from "../../src/util/log.ts";
import { createNamespace } from "./harness/kube.ts";
import { targetSuite } from "./harness/suite.ts";
import { selectedTargets, type TargetName } from "./harness/target.ts";

const CONFIGMAPS: Resource = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false };

describe.each(selectedTargets())("resources in kobun.yaml against %s", (targetName: TargetName) => {
  const need = targetSuite(targetName, { crds: [], cleanup: [] });

  test("labelSelector and fieldSelector keep unmatching objects out of LIST and WATCH; enabled: false leaves a resource unwatched", async () => {
    const target = need();
    const ns = await createNamespace(target.client, "e2e-res");
    const configmap = (name: string, labels: Record<string, string>) =>
      target.client.create(CONFIGMAPS, ns, { apiVersion: "v1", kind: "ConfigMap", metadata: { name, labels } });
    // Before start: these reach the operator (or not) through the initial LIST.
    await configmap("web-early", { app: "web" });
    await configmap("db-early", { app: "db" });
    await configmap("skip", { app: "web" });

    const settings = resolveSettings({
      fileData: parseConfigText(
        `peering: { standalone: true }\nnamespaces: { include: [${ns}] }\nresources:\n  v1/configmaps:\n    labelSelector: app=web\n    fieldSelector: metadata.name!=skip\n  secrets: { enabled: false }\n`,
        "kobun.yaml",
      ),
    });
    const received = new Set<string>();
    const { promise: lastSeen, resolve } = Promise.withResolvers<void>();
    const registry = new Registry();
    registry.on.event("v1/configmaps", ({ name }) => {
      received.add(name);
      // Both watched ones: each object has its own worker, so web-last's handler may run before web-late's.
      if (received.has("web-late") && received.has("web-last")) resolve();
    }, { id: "every-event" });
    registry.on.event("secrets", () => {}, { id: "secrets" });
    const client = await KubeClient.connect({ kubeconfig: target.kubeconfigPath });
    const stop = new AbortController();
    const { promise: started, resolve: onStarted } = Promise.withResolvers<Resource[]>();
    const running = run({ signal: stop.signal, settings, client, registry, logger: new Logger(memorySink("error")), onStarted: (info) => onStarted(info.resources) });
    try {
      expect((await started).map(resourceName)).toEqual(["configmaps"]);
      // After start: through the WATCH.
      await configmap("db-late", { app: "db" });
      await configmap("web-late", { app: "web" });
      await configmap("web-last", { app: "web" });
      let timer: Timer | undefined;
      const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`web-late and web-last never both arrived; received ${[...received].join(", ")}`)), 30_000)));
      await Promise.race([lastSeen, late]).finally(() => clearTimeout(timer));
      // Events arrive in resourceVersion order: db-late, had the selector let it through, came before both.
      expect([...received].sort()).toEqual(["web-early", "web-last", "web-late"]);
    } finally {
      stop.abort();
      await running;
      client.close();
    }
    console.log(`e2e ${targetName}: resources selectors received=${[...received].sort().join(",")}`);
  }, 60_000);
});
