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

/** The operator's Role as `kobun manifests` prints it for a project holding `handlers`. */
async function roleOf(handlers: string): Promise<(group: string, resource: string) => string[] | undefined> {
  const project = join(ROOT, ".tmp/reconcile-blackbox", `project-${process.pid}`);
  mkdirSync(join(project, "handlers"), { recursive: true });
  try {
    writeFileSync(join(project, "handlers/widgets.ts"), handlers);
    const cli = Bun.spawn([process.execPath, join(ROOT, "bin/kobun.js"), "manifests", "--name", "op", "--image", "op:1", "-n", "apps"], {
      cwd: project, stdout: "pipe", stderr: "pipe", env: { ...process.env, KOBUN_BUN: process.execPath },
    });
    const [out, err, code] = await Promise.all([new Response(cli.stdout).text(), new Response(cli.stderr).text(), cli.exited]);
    expect({ code, err }).toEqual({ code: 0, err: "" });
    const role = parseAllDocuments(out).map((d) => d.toJS()).find((d) => d?.kind === "Role" && d.metadata.name === "op");
    return (group: string, resource: string) =>
      role.rules.find((r: any) => r.apiGroups.includes(group) && r.resources.includes(resource))?.verbs.slice().sort();
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
