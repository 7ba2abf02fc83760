// A peering the operator cannot follow is a /healthz problem, not a silent freeze: here the
// service account may read, create and patch its peering object but not list or watch it, so
// the first look at the peers never comes and the operator stays frozen. Once RBAC lets it
// watch, the problem clears and the operator runs. A mandatory peering it may not even read
// is one too.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/index.ts";
import { KubeClient } from "../../src/kube/client.ts";
import type { Health } from "../../src/observability/health.ts";
import { run } from "../../src/runtime/operator.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { Logger, memorySink } from "../../src/util/log.ts";
import { installCRDs } from "../peering/helpers.ts";
import { eventually } from "./helpers.ts";
import { asAdmin, restrictedKubeconfig } from "./restricted.ts";

const ADMIN = "admin-token";
const NS = "ph";
const RBAC = "/apis/rbac.authorization.k8s.io/v1";
let sandbox: Sandbox;
let admin: KubeClient;
beforeAll(async () => {
  sandbox = await startSandbox({ token: ADMIN });
  admin = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  await installCRDs(admin, "kobun.dev");
});
afterAll(async () => {
  admin.close();
  await sandbox.stop();
});

test("a peering watch that is forbidden is reported on /healthz, and the problem clears once it may watch", async () => {
  await asAdmin(sandbox, ADMIN, "POST", "/api/v1/namespaces", { metadata: { name: NS } });
  const kubeconfig = await restrictedKubeconfig(sandbox, ADMIN, "ph-home", {
    roles: {
      [NS]: [
        { apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list", "watch", "patch"] },
        { apiGroups: [""], resources: ["events"], verbs: ["create"] },
        { apiGroups: ["kobun.dev"], resources: ["kobunpeerings"], verbs: ["get", "create", "patch"] },
      ],
    },
  });
  const client = await KubeClient.connect({ kubeconfig });
  const handled: string[] = [];
  const registry = new Registry();
  registry.on.create("v1/configmaps", ({ name }) => void handled.push(name), { id: "record" });
  const stop = new AbortController();
  let health: Health | undefined;
  const running = run({
    signal: stop.signal, client, registry, logger: new Logger(memorySink("info")),
    settings: resolveSettings({ flags: { namespaces: [NS] } }),
    onStarted: (info) => (health = info.health),
  });
  try {
    await eventually(() => health?.healthy === false, "the forbidden peering watch to be reported", 10_000);
    const problems = Object.entries(health!.report().problems);
    expect(problems).toHaveLength(1);
    expect(problems[0]![0]).toBe(`peering in ${NS}`);
    expect(problems[0]![1]).toMatch(/^watching the peering object failed: .*forbidden/);

    // Frozen meanwhile: nothing is handled.
    await asAdmin(sandbox, ADMIN, "POST", `/api/v1/namespaces/${NS}/configmaps`, { metadata: { name: "waiting" } });
    expect(handled).toEqual([]);

    // RBAC lets it watch now: the next attempt works, the problem goes, the operator runs.
    await asAdmin(sandbox, ADMIN, "POST", `${RBAC}/namespaces/${NS}/roles`, {
      metadata: { name: "watch-peering" }, rules: [{ apiGroups: ["kobun.dev"], resources: ["kobunpeerings"], verbs: ["list", "watch"] }],
    });
    await asAdmin(sandbox, ADMIN, "POST", `${RBAC}/namespaces/${NS}/rolebindings`, {
      metadata: { name: "watch-peering" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "watch-peering" },
      subjects: [{ kind: "ServiceAccount", name: "op", namespace: "ph-home" }],
    });
    await eventually(() => health!.healthy, "the peering problem to clear", 40_000);
    await eventually(() => handled.includes("waiting"), "the configmap to be handled after the first look", 10_000);
  } finally {
    stop.abort();
    await running.catch(() => {});
    client.close();
  }
}, 60_000);

test("a mandatory peering the operator may not read keeps it frozen with a /healthz problem saying why", async () => {
  await asAdmin(sandbox, ADMIN, "POST", "/api/v1/namespaces", { metadata: { name: "ph-2" } });
  const kubeconfig = await restrictedKubeconfig(sandbox, ADMIN, "ph-home-2", {
    roles: { "ph-2": [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list", "watch", "patch"] }] },
  });
  const client = await KubeClient.connect({ kubeconfig });
  const registry = new Registry();
  registry.on.create("v1/configmaps", () => {}, { id: "noop" });
  const stop = new AbortController();
  let health: Health | undefined;
  const running = run({
    signal: stop.signal, client, registry, logger: new Logger(memorySink("info")), peeringMandatory: true,
    settings: resolveSettings({ flags: { namespaces: ["ph-2"] } }),
    onStarted: (info) => (health = info.health),
  });
  try {
    await eventually(() => health?.healthy === false, "the unreadable peering to be reported", 10_000);
    expect(health!.report().problems).toEqual({ "peering in ph-2": expect.stringMatching(/^staying frozen: forbidden to read kobunpeerings/) });
  } finally {
    stop.abort();
    await running.catch(() => {});
    client.close();
  }
}, 30_000);
