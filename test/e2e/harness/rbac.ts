// Running the operator under the RBAC `kobun manifests` prints: the manifests from the binary,
// applied as the admin, a TokenRequest token for its ServiceAccount in a kubeconfig of its own,
// and the checks every such run ends with (a clean stop, no 403 anywhere in the log).

import { expect } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments, parse as parseYaml, stringify as stringifyYaml } from "yaml";
import type { KubeObject, Resource } from "../../../src/kube/types.ts";
import { CRDS } from "./kube.ts";
import { KOBUN, type Operator } from "./operator.ts";
import type { Target } from "./target.ts";

/** Where the documents of `kobun manifests` are created, by kind (CRDs aside). */
export const MANIFEST_KINDS: Record<string, Resource> = {
  ServiceAccount: { group: "", version: "v1", plural: "serviceaccounts", kind: "ServiceAccount", namespaced: true, statusSubresource: false },
  Role: { group: "rbac.authorization.k8s.io", version: "v1", plural: "roles", kind: "Role", namespaced: true, statusSubresource: false },
  RoleBinding: { group: "rbac.authorization.k8s.io", version: "v1", plural: "rolebindings", kind: "RoleBinding", namespaced: true, statusSubresource: false },
  ClusterRole: { group: "rbac.authorization.k8s.io", version: "v1", plural: "clusterroles", kind: "ClusterRole", namespaced: false, statusSubresource: false },
  ClusterRoleBinding: { group: "rbac.authorization.k8s.io", version: "v1", plural: "clusterrolebindings", kind: "ClusterRoleBinding", namespaced: false, statusSubresource: false },
  Deployment: { group: "apps", version: "v1", plural: "deployments", kind: "Deployment", namespaced: true, statusSubresource: true },
  ConfigMap: { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false },
  PodDisruptionBudget: { group: "policy", version: "v1", plural: "poddisruptionbudgets", kind: "PodDisruptionBudget", namespaced: true, statusSubresource: true },
};

/** `dist/kobun manifests ...args` (cwd and HOME in `home`): the parsed documents. */
export function manifests(home: string, args: string[]): KubeObject[] {
  const r = Bun.spawnSync([KOBUN, "manifests", ...args], {
    cwd: home, env: { PATH: process.env.PATH ?? "", HOME: home, NO_COLOR: "1" }, stdout: "pipe", stderr: "pipe",
  });
  expect({ code: r.exitCode, stderr: r.stderr.toString() }).toEqual({ code: 0, stderr: "" });
  return parseAllDocuments(r.stdout.toString()).map((d) => d.toJS()).filter(Boolean) as KubeObject[];
}

export interface Applied {
  kubeconfig: string;
  user: string;
  /** Deletes the cluster-scoped objects it created (ClusterRoles and their bindings outlive namespaces). */
  cleanup: () => Promise<void>;
}

/**
 * Creates the documents of `kobun manifests` as the admin (CRDs: kept if they exist; the
 * Deployment only with `deployment: true`: no kubelet runs it here, but the server validates
 * it), issues a token for its ServiceAccount (TokenRequest) and writes a kubeconfig with only
 * that token. Every create must succeed: that is what `kubectl apply` of the output needs.
 */
export async function applyRbacAndToken(t: Target, docs: KubeObject[], home: string, { deployment = false } = {}): Promise<Applied> {
  const clusterScoped: [Resource, string][] = [];
  const cleanup = async () => {
    for (const [res, name] of clusterScoped.reverse()) await t.client.delete(res, null, name).catch(() => {});
  };
  try {
    for (const doc of docs) {
      if (doc.kind === "CustomResourceDefinition") {
        await t.client.create(CRDS, null, doc).catch((e) => { if ((e as { code?: number }).code !== 409) throw e; });
        continue;
      }
      const res = MANIFEST_KINDS[doc.kind as string];
      if (!res) throw new Error(`kobun manifests printed a ${doc.kind}, which this harness does not know how to apply`);
      if (doc.kind === "Deployment" && !deployment) continue;
      await t.client.create(res, res.namespaced ? doc.metadata.namespace! : null, doc)
        .catch((e) => { throw new Error(`applying ${doc.kind} ${doc.metadata.namespace ?? ""}/${doc.metadata.name}: ${(e as Error).message}`); });
      if (!res.namespaced) clusterScoped.push([res, doc.metadata.name!]);
    }
    const sa = docs.find((d) => d.kind === "ServiceAccount")!;
    const { name, namespace } = sa.metadata as { name: string; namespace: string };
    const tr = await t.client.request<any>("POST", `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, {
      body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 3600 } },
    });
    expect(typeof tr.status?.token).toBe("string");
    const adminConfig = parseYaml(readFileSync(t.kubeconfigPath, "utf8"));
    const ctxName = adminConfig["current-context"];
    const ctx = adminConfig.contexts.find((c: any) => c.name === ctxName)?.context ?? adminConfig.contexts[0].context;
    const cluster = adminConfig.clusters.find((c: any) => c.name === ctx.cluster)?.cluster ?? adminConfig.clusters[0].cluster;
    const kubeconfig = join(home, `sa-kubeconfig-${name}.yaml`);
    writeFileSync(kubeconfig, stringifyYaml({
      apiVersion: "v1", kind: "Config",
      clusters: [{ name: "target", cluster }],
      users: [{ name, user: { token: tr.status.token } }],
      contexts: [{ name: "sa", context: { cluster: "target", user: name, namespace } }],
      "current-context": "sa",
    }), { mode: 0o600 });
    return { kubeconfig, user: `system:serviceaccount:${namespace}:${name}`, cleanup };
  } catch (e) {
    await cleanup();
    throw e;
  }
}

/**
 * Stops an operator that ran under restricted RBAC: SIGTERM, exit 0, no 403 in its log (a resourceVersion that
 * happens to be 403, in "Creation is in progress: resourceVersion 403.", is not one).
 */
export async function expectCleanStopWithoutForbidden(op: Operator, signal?: "SIGTERM"): Promise<void> {
  const { code } = await op.stop(signal);
  expect(op.lines.filter((l) => /(?<!resourceVersion[ =])\b403\b|forbidden/i.test(l))).toEqual([]);
  expect(code).toBe(0);
}

/** Runs the checks of a running operator; if one fails, the operator is killed before rethrowing. */
export async function whileRunning(op: Operator, checks: () => Promise<void>): Promise<void> {
  try {
    await checks();
  } catch (e) {
    await op.stop("SIGKILL").catch(() => {});
    throw e;
  }
}
