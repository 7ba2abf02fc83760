// An operator identity with only the permissions a test grants: a ServiceAccount in the
// sandbox (TokenRequest), bound to the given rules, and a kubeconfig holding only its token.
// The sandbox then answers 403 exactly as a kube-apiserver with RBAC would.

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Sandbox } from "@kobun/sandbox";

export interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/** Calls the sandbox as the admin; returns the parsed body, throwing on an unexpected status. */
export async function asAdmin(sandbox: Sandbox, adminToken: string, method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(sandbox.url + path, {
    method,
    headers: { authorization: `Bearer ${adminToken}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const parsed = await response.json().catch(() => undefined);
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(parsed)}`);
  return parsed;
}

/**
 * A ServiceAccount `op` in namespace `home` with `cluster` rules cluster-wide and `roles[ns]`
 * in each namespace ns; returns the path of a kubeconfig with only its token.
 */
export async function restrictedKubeconfig(
  sandbox: Sandbox, adminToken: string, home: string, grants: { cluster?: Rule[]; roles?: Record<string, Rule[]> },
): Promise<string> {
  const admin = (method: string, path: string, body?: unknown) => asAdmin(sandbox, adminToken, method, path, body);
  const rbac = "/apis/rbac.authorization.k8s.io/v1";
  const subjects = [{ kind: "ServiceAccount", name: "op", namespace: home }];
  await admin("POST", "/api/v1/namespaces", { metadata: { name: home } });
  await admin("POST", `/api/v1/namespaces/${home}/serviceaccounts`, { metadata: { name: "op" } });
  if (grants.cluster) {
    await admin("POST", `${rbac}/clusterroles`, { metadata: { name: `op-${home}` }, rules: grants.cluster });
    await admin("POST", `${rbac}/clusterrolebindings`, {
      metadata: { name: `op-${home}` }, roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: `op-${home}` }, subjects,
    });
  }
  for (const [ns, rules] of Object.entries(grants.roles ?? {})) {
    await admin("POST", `${rbac}/namespaces/${ns}/roles`, { metadata: { name: "op" }, rules });
    await admin("POST", `${rbac}/namespaces/${ns}/rolebindings`, {
      metadata: { name: "op" }, roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "op" }, subjects,
    });
  }
  const request = await admin("POST", `/api/v1/namespaces/${home}/serviceaccounts/op/token`, {
    apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 3600 },
  });
  const path = join(sandbox.kubeconfigPath, "..", `restricted-${home}.yaml`);
  writeFileSync(path, JSON.stringify({
    apiVersion: "v1", kind: "Config", "current-context": "op",
    clusters: [{ name: "sandbox", cluster: { server: sandbox.url } }],
    users: [{ name: "op", user: { token: request.status.token } }],
    contexts: [{ name: "op", context: { cluster: "sandbox", user: "op" } }],
  }), { mode: 0o600 });
  return path;
}
