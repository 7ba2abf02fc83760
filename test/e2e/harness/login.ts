// The on.login scenario of toolbox.e2e.ts (issue 13), in-process against the target: the
// operator's kubeconfig holds a token the server refuses; its login handler asks the API server for a ServiceAccount token (TokenRequest,
// with a Role in the test's namespace) and the operator works with that, under real
// authentication and RBAC on kube-apiserver. The first token is said to expire soon
// (`expiresAt`): once it has, the next request logs in again (`renewal`) and the work goes on.
// On a sandbox in "open" mode (toolbox.e2e.ts's) any token is the admin, so only a real server
// shows the kubeconfig's refused on its own (`refusing`), and a revoked token refused while the
// renewal fails (issue 30: one login per backoff step, not one per refused request).

import { expect } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { resolveSettings } from "../../../src/config/index.ts";
import { Registry } from "../../../src/declaring/index.ts";
import type { Resource } from "../../../src/kube/types.ts";
import { run } from "../../../src/runtime/operator.ts";
import { Logger, memorySink } from "../../../src/util/log.ts";
import { createNamespace, eventually, getOrUndefined } from "./kube.ts";
import { MANIFEST_KINDS } from "./rbac.ts";
import type { Target } from "./target.ts";

const CONFIGMAPS: Resource = MANIFEST_KINDS.ConfigMap!;
const SERVICE_ACCOUNTS: Resource = MANIFEST_KINDS.ServiceAccount!;

/** The admin kubeconfig's cluster (server, CA), and a kubeconfig for it with a token nobody issued. */
function clusterOf(t: Target): { server: string; ca?: string; refused: string } {
  const config = Bun.YAML.parse(readFileSync(t.kubeconfigPath, "utf8")) as any;
  const context = config.contexts.find((c: any) => c.name === config["current-context"])?.context ?? config.contexts[0].context;
  const cluster = config.clusters.find((c: any) => c.name === context.cluster)?.cluster ?? config.clusters[0].cluster;
  const caData: string | undefined = cluster["certificate-authority-data"];
  const caFile: string | undefined = cluster["certificate-authority"];
  const ca = caData ? Buffer.from(caData, "base64").toString("utf8") : caFile ? readFileSync(join(t.kubeconfigPath, "..", caFile), "utf8") : undefined;
  const refused = join(t.kubeconfigPath, "..", `refused-${process.pid}.yaml`);
  writeFileSync(refused, JSON.stringify({
    apiVersion: "v1", kind: "Config", "current-context": "refused",
    clusters: [{ name: "target", cluster: { server: cluster.server, ...(caData ? { "certificate-authority-data": caData } : {}), ...(caFile ? { "certificate-authority": join(t.kubeconfigPath, "..", caFile) } : {}) } }],
    users: [{ name: "refused", user: { token: "a-token-no-one-issued" } }],
    contexts: [{ name: "refused", context: { cluster: "target", user: "refused" } }],
  }), { mode: 0o600 });
  return { server: cluster.server, ...(ca ? { ca } : {}), refused };
}

/** Runs the scenario on `t`; `refusing`: the server refuses unknown tokens (first shown). */
export async function loginScenario(t: Target, refusing: boolean): Promise<void> {
  const ns = await createNamespace(t.client, "login");
  const rbac = (plural: "roles" | "rolebindings") => MANIFEST_KINDS[plural === "roles" ? "Role" : "RoleBinding"]!;
  await t.client.create(SERVICE_ACCOUNTS, ns, { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "op" } });
  await t.client.create(rbac("roles"), ns, {
    apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role", metadata: { name: "op" },
    rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list", "watch", "patch"] }, { apiGroups: ["", "events.k8s.io"], resources: ["events"], verbs: ["create", "patch"] }],
  });
  await t.client.create(rbac("rolebindings"), ns, {
    apiVersion: "rbac.authorization.k8s.io/v1", kind: "RoleBinding", metadata: { name: "op" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "op" }, subjects: [{ kind: "ServiceAccount", name: "op", namespace: ns }],
  });
  const { server, ca, refused } = clusterOf(t);
  const settings = resolveSettings({ flags: { kubeconfig: refused, namespaces: [ns], standalone: true } });
  if (refusing) {
    const alone = await run({ registry: new Registry(), logger: new Logger(memorySink("error")), settings }).catch((error) => error);
    expect(alone.exitCode).toBe(4); // the kubeconfig alone does not get in
  }

  const registry = new Registry();
  const renewals: boolean[] = [];
  const issued: string[] = [];
  let sealed = false;
  const sealedAttempts: number[] = [];
  registry.on.login(async ({ renewal }) => {
    if (sealed) {
      sealedAttempts.push(Date.now());
      throw new Error("vault is sealed");
    }
    renewals.push(renewal);
    const request = await t.client.request<any>("POST", `/api/v1/namespaces/${ns}/serviceaccounts/op/token`, {
      body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 3600 } },
    });
    issued.push(request.status.token);
    // The first one "expires" in 1.5 s: kobun must ask again before using it after that.
    return { server, ...(ca ? { ca } : {}), token: request.status.token, ...(renewal ? {} : { expiresAt: Date.now() + 1500 }) };
  }, { id: "token-request" });
  registry.on.create("v1/configmaps", ({ patch }) => {
    patch.metadata.annotations = { "e2e.kobun.dev/handled": "yes" };
  }, { id: "mark" });
  // Issue 30: the token revoked (its ServiceAccount recreated: a real 401) while the login fails.
  // kube-apiserver may accept a revoked token for a few seconds more (its authentication cache),
  // so ConfigMaps are created until a PATCH is refused; then twenty refused PATCHes at once ask for
  // no login of their own: attempts 1 s apart, then 2 s. Once the login works again, its next
  // attempt gets the work going.
  const failingRenewal = async () => {
    sealed = true;
    await t.client.delete(SERVICE_ACCOUNTS, ns, "op");
    await t.client.create(SERVICE_ACCOUNTS, ns, { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "op" } });
    const names: string[] = [];
    const configMap = (name: string) => {
      names.push(name);
      return t.client.create(CONFIGMAPS, ns, { apiVersion: "v1", kind: "ConfigMap", metadata: { name } });
    };
    await eventually("the first failing renewal", async () => {
      await configMap(`sealed-${names.length}`);
      return sealedAttempts.length > 0;
    }, { timeoutMs: 30_000, intervalMs: 500 });
    await Promise.all(Array.from({ length: 20 }, (_, i) => configMap(`burst-${i}`)));
    await Bun.sleep(2500); // a window to count in, not a synchronisation
    expect(sealedAttempts.filter((at) => at - sealedAttempts[0]! < 2500).length).toBeLessThanOrEqual(2);
    sealed = false;
    for (const name of names) await handled(name);
    expect(renewals.slice(2)).toEqual([true]); // one login after the vault opened again
  };
  const sink = memorySink("debug");
  const stop = new AbortController();
  const operator = run({ signal: stop.signal, registry, logger: new Logger(sink), settings });
  const handled = (name: string) => eventually(`configmap ${name} handled`, async () =>
    (await getOrUndefined(t.client, CONFIGMAPS, ns, name))?.metadata.annotations?.["e2e.kobun.dev/handled"] === "yes", { timeoutMs: 20_000 });
  try {
    await t.client.create(CONFIGMAPS, ns, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "first" } });
    await handled("first");
    expect(renewals).toEqual([false]);
    await Bun.sleep(1600); // the first token's expiresAt passes (a deadline given to kobun, not a synchronisation)
    await t.client.create(CONFIGMAPS, ns, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "second" } });
    await handled("second");
    expect(renewals).toEqual([false, true]);
    if (refusing) await failingRenewal();
  } finally {
    stop.abort();
    await operator;
  }
  const log = sink.lines.join("\n");
  expect(sink.lines.filter((line) => line.includes("on.login could not renew the credentials"))).toHaveLength(sealedAttempts.length);
  expect(log).not.toContain("forbidden");
  for (const token of issued) expect(log).not.toContain(token);
}
