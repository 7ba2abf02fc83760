// /healthz tells the truth: a problem belongs to the component that reported it and ends with
// it. A namespace whose watch is forbidden is unhealthy while it is served, and healthy again
// once the namespace is deleted (else a liveness probe would restart a healthy pod forever).

import { afterAll, beforeAll, expect, test } from "bun:test";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/index.ts";
import { KubeClient } from "../../src/kube/client.ts";
import type { Health } from "../../src/observability/health.ts";
import { run } from "../../src/runtime/operator.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { Logger, memorySink } from "../../src/util/log.ts";
import { eventually } from "./helpers.ts";
import { asAdmin, restrictedKubeconfig } from "./restricted.ts";

const ADMIN = "admin-token";
let sandbox: Sandbox;
beforeAll(async () => (sandbox = await startSandbox({ token: ADMIN })));
afterAll(() => sandbox.stop());

test("a forbidden namespace's watch problem is cleared when the namespace is deleted", async () => {
  // Namespaces may be followed cluster-wide; configmaps may be watched only in hz-ok.
  await asAdmin(sandbox, ADMIN, "POST", "/api/v1/namespaces", { metadata: { name: "hz-ok" } });
  const kubeconfig = await restrictedKubeconfig(sandbox, ADMIN, "op-home", {
    cluster: [{ apiGroups: [""], resources: ["namespaces"], verbs: ["list", "watch"] }],
    roles: { "hz-ok": [{ apiGroups: [""], resources: ["configmaps"], verbs: ["list", "watch", "patch"] }] },
  });
  const client = await KubeClient.connect({ kubeconfig });
  const registry = new Registry();
  registry.on.create("v1/configmaps", () => {}, { id: "noop" });
  const stop = new AbortController();
  let health: Health | undefined;
  const running = run({
    signal: stop.signal, client, registry, logger: new Logger(memorySink("info")),
    settings: resolveSettings({ fileData: { watching: { backoff: { initial: "200ms", max: "1s" } } }, flags: { namespaces: ["hz-*"], standalone: true } }),
    onStarted: (info) => (health = info.health),
  });
  let ended = false;
  void running.then(() => (ended = true), () => (ended = true));
  try {
    await eventually(() => health !== undefined, "the operator to start");
    await asAdmin(sandbox, ADMIN, "POST", "/api/v1/namespaces", { metadata: { name: "hz-denied" } });
    await eventually(() => "watch configmaps in hz-denied" in health!.report().problems, "the forbidden watch to be reported", 10_000);
    expect(health!.report().problems["watch configmaps in hz-denied"]).toContain("forbidden");
    expect(Object.keys(health!.report().problems)).toEqual(["watch configmaps in hz-denied"]);

    await asAdmin(sandbox, ADMIN, "DELETE", "/api/v1/namespaces/hz-denied");
    await eventually(() => health!.healthy, "the problem to go with its namespace", 10_000);
    // Healthy because the namespace went, not because a 403 ended the operator: a namespace a
    // glob finds may get its RoleBinding a moment later, so its 403 is retried.
    expect(ended).toBe(false);
  } finally {
    stop.abort();
    await running;
    client.close();
  }
}, 30_000);
