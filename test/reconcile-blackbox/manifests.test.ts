// `kobun manifests` for a reconcile (docs/reconcile.md, "What runs it"): the owned resources are
// granted in full (as handlers' children), the watched ones read only (get, list, watch), the
// reconciled one what kobun writes of it. Run as a user runs it: the CLI in a project whose
// handlers/ holds the reconcile.

import { expect, test } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";

const ROOT = join(import.meta.dir, "../..");
const HANDLERS = `import { on, resource } from "kobun";
on.reconcile("widgets.blackbox.kobun.dev/v1", () => {}, {
  owns: [resource.configmaps, "apps/v1/deployments"],
  watches: [{ resource: resource.secrets, map: () => null }],
});
`;

/** The operator's Role (or ClusterRole) as `kobun manifests` prints it for a project holding `handlers`. */
async function roleOf(
  handlers: string, kind: "Role" | "ClusterRole" = "Role",
): Promise<(group: string, resource: string) => string[] | undefined> {
  const project = join(ROOT, ".tmp/reconcile-blackbox", `project-${process.pid}`);
  mkdirSync(join(project, "handlers"), { recursive: true });
  try {
    writeFileSync(join(project, "handlers/widgets.ts"), handlers);
    const cli = Bun.spawn([process.execPath, join(ROOT, "bin/kobun.js"), "manifests", "--name", "op", "--image", "op:1", "-n", "apps"], {
      cwd: project, stdout: "pipe", stderr: "pipe", env: { ...process.env, KOBUN_BUN: process.execPath },
    });
    const [out, err, code] = await Promise.all([new Response(cli.stdout).text(), new Response(cli.stderr).text(), cli.exited]);
    expect({ code, err }).toEqual({ code: 0, err: "" });
    const role = parseAllDocuments(out).map((d) => d.toJS()).find((d) => d?.kind === kind && d.metadata.name === "op");
    return (group: string, resource: string) =>
      role?.rules.find((r: any) => r.apiGroups.includes(group) && r.resources.includes(resource))?.verbs.slice().sort();
  } finally {
    rmSync(project, { recursive: true, force: true });
  }
}

const full = ["create", "delete", "get", "list", "patch", "update", "watch"];

test("owned resources are granted in full, watched ones read only, the reconciled one read and patch", async () => {
  const verbs = await roleOf(HANDLERS);
  expect(verbs("", "configmaps")).toEqual(full);
  expect(verbs("apps", "deployments")).toEqual(full);
  expect(verbs("", "secrets")).toEqual(["get", "list", "watch"]);
  expect(verbs("blackbox.kobun.dev", "widgets")).toEqual(["get", "list", "patch", "watch"]);
  expect(verbs("blackbox.kobun.dev", "widgets/status")).toEqual(["patch"]);
}, 60_000);

// A Database reconcile writes an entry of a ledger ConfigMap it neither owns nor is woken by, and watches
// ConfigMaps of defaults: before `children`, the ledger's writes had no grant (403 on a cluster, unseen in
// the sandbox, which checks no RBAC).
test("children: what a reconcile writes beside what it owns is granted in full, watched or not", async () => {
  const verbs = await roleOf(`import { on, resource } from "kobun";
on.reconcile("widgets.blackbox.kobun.dev/v1", () => {}, {
  watches: [{ resource: resource.configmaps, map: () => null }],
  children: [resource.configmaps, "v1/serviceaccounts"],
});
`);
  expect(verbs("", "configmaps")).toEqual(full);
  expect(verbs("", "serviceaccounts")).toEqual(full);
}, 60_000);

// Named as discovery names them, a built-in resource is granted under its group and plural, where a grant of it
// works: nodes and namespaces are cluster-scoped, and a Role in the served namespace granting them granted nothing
// (403 at the first LIST on a cluster); a Job or a bare "deployments" was granted in the core group.
test("built-ins: cluster-scoped ones granted by the ClusterRole, each under its own group and plural", async () => {
  const handlers = `import { on, resource } from "kobun";
on.reconcile("widgets.blackbox.kobun.dev/v1", () => {}, {
  owns: ["deployments", "Job", "rbac.authorization.k8s.io/v1/clusterroles"],
  watches: [{ resource: resource.namespaces, map: () => null }, { resource: "no", map: () => null }],
});
`;
  const role = await roleOf(handlers);
  const clusterRole = await roleOf(handlers, "ClusterRole"); // one after the other: both write the same project
  expect([role("apps", "deployments"), role("batch", "jobs")]).toEqual([full, full]);
  expect([role("", "namespaces"), role("", "nodes"), role("rbac.authorization.k8s.io", "clusterroles")])
    .toEqual([undefined, undefined, undefined]);
  expect([clusterRole("", "namespaces"), clusterRole("", "nodes")]).toEqual([["get", "list", "watch"], ["get", "list", "watch"]]);
  expect(clusterRole("rbac.authorization.k8s.io", "clusterroles")).toEqual(full);
}, 60_000);
