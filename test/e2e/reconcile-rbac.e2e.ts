// A reconcile that owns ConfigMaps and watches Namespaces (cluster-scoped) runs under exactly the
// RBAC `kobun manifests -n NS` prints for it, on the real kube-apiserver's RBAC: the owned
// resource granted in the served namespace, the cluster-scoped watched one by the ClusterRole (a
// Role granting it grants nothing: before, its first LIST was refused 403 and the operator never
// became ready). Its map wakes the widget a Namespace names by its labels, and ctx.cache lists the
// Namespaces by label: labelled, unlabelled, each shows in the widget's ConfigMap.
//
//   cd test/e2e && KOBUN_E2E_TARGET=cluster bun test ./reconcile-rbac.e2e.ts

import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import type { KubeObject, Resource } from "../../src/kube/types.ts";
import { createNamespace, eventually, getOrUndefined, NAMESPACES } from "./harness/kube.ts";
import { Operator, ROOT } from "./harness/operator.ts";
import { applyRbacAndToken, expectCleanStopWithoutForbidden, whileRunning } from "./harness/rbac.ts";
import { targetSuite } from "./harness/suite.ts";
import { selectedTargets, type TargetName } from "./harness/target.ts";

const WIDGET_CRD = join(import.meta.dir, "handlers/kobunwidget.crd.yaml");
const WIDGETS: Resource = {
  group: "e2e.kobun.dev", version: "v1", plural: "kobunwidgets", kind: "KobunWidget", namespaced: true, statusSubresource: false,
};
const CONFIGMAPS: Resource = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false };

const HANDLERS = `import { adopt, on, resource } from "kobun";
const LABEL = "e2e.kobun.dev/widget";
on.reconcile("kobunwidgets.e2e.kobun.dev/v1", async (ctx) => {
  const selected = ctx.cache.list(resource.namespaces, { labelSelector: LABEL + "=" + ctx.name });
  const data = { namespaces: selected.map((ns) => ns.metadata.name).sort().join(",") };
  const name = ctx.name + "-namespaces";
  const child = ctx.cache.get(resource.configmaps, name);
  if (!child) await ctx.api.create(adopt({ apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data }, { owner: ctx.body }));
  else if (child.data?.namespaces !== data.namespaces) await ctx.api.patch(resource.configmaps, name, { data });
}, {
  owns: [resource.configmaps],
  watches: [{
    resource: resource.namespaces,
    map: (ns) => (ns.metadata.labels?.[LABEL] ? { name: ns.metadata.labels[LABEL], namespace: ns.metadata.labels[LABEL + "-in"] } : null),
  }],
});
`;

/** `kobun manifests` (from the sources, as `npx kobun manifests`) in the project `dir`. */
function manifestsOf(dir: string, args: string[]): KubeObject[] {
  const r = Bun.spawnSync([process.execPath, join(ROOT, "bin/kobun.js"), "manifests", ...args], {
    cwd: dir, env: { PATH: process.env.PATH ?? "", HOME: dir, NO_COLOR: "1", KOBUN_BUN: process.execPath }, stdout: "pipe", stderr: "pipe",
  });
  expect({ code: r.exitCode, stderr: r.stderr.toString() }).toEqual({ code: 0, stderr: "" });
  return parseAllDocuments(r.stdout.toString()).map((d) => d.toJS()).filter(Boolean) as KubeObject[];
}

describe.each(selectedTargets())("a reconcile under the RBAC kobun manifests prints, against %s", (targetName: TargetName) => {
  const need = targetSuite(targetName, { crds: [WIDGET_CRD], cleanup: [WIDGETS] });

  test("owns ConfigMaps and watches Namespaces: its child follows the Namespaces labelled for it, without one 403", async () => {
    const t = need();
    const project = mkdtempSync(join(ROOT, ".tmp/e2e-reconcile-rbac-"));
    const ns = await createNamespace(t.client, "e2e-rr");
    const others = [await createNamespace(t.client, "e2e-rr-a"), await createNamespace(t.client, "e2e-rr-b")];
    try {
      mkdirSync(join(project, "handlers"));
      const handlers = join(project, "handlers/widgets.ts");
      writeFileSync(handlers, HANDLERS);
      const docs = manifestsOf(project, ["--name", "rr", "--image", "rr:1", "-n", ns, "--standalone"]);
      const applied = await applyRbacAndToken(t, docs, project);
      try {
        const op = new Operator("reconcile-rbac", process.execPath, [
          join(ROOT, "bin/kobun.js"), "run", handlers, "--kubeconfig", applied.kubeconfig, "-v", "-n", ns, "--standalone",
        ], { KOBUN_BUN: process.execPath });
        await whileRunning(op, async () => {
          await op.waitForLog(/operator ready/, 30_000);
          await t.client.create(WIDGETS, ns, { apiVersion: "e2e.kobun.dev/v1", kind: "KobunWidget", metadata: { name: "w" }, spec: {} });
          const shows = (want: string) => eventually(`w-namespaces showing "${want}"`, async () =>
            (await getOrUndefined(t.client, CONFIGMAPS, ns, "w-namespaces"))?.data?.namespaces === want, { timeoutMs: 20_000 });
          await shows("");
          const label = (value: string | null) => ({ metadata: { labels: { "e2e.kobun.dev/widget": value, "e2e.kobun.dev/widget-in": value && ns } } });
          for (const other of others) await t.client.patch(NAMESPACES, null, other, label("w"));
          await shows([...others].sort().join(","));
          await t.client.patch(NAMESPACES, null, others[0]!, label(null)); // its old labels wake the widget it left
          await shows(others[1]!);
        });
        await expectCleanStopWithoutForbidden(op);
      } finally {
        await applied.cleanup();
      }
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  }, 120_000);
});
