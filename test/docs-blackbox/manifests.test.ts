// The README's "Deploying: kobun manifests", as a project's author runs it: objects named after the
// package.json's name with its scope dropped, the image NAME:latest, `-n a -n b` a Role and a
// RoleBinding in each, the operator's own objects in "default", and a Deployment that passes Pod Security `restricted` with 384 Mi of memory.

import { expect, test } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { root, scratchDir } from "./helpers.ts";

interface Manifest { kind: string; metadata: { name: string; namespace?: string }; spec?: any }

test("kobun manifests -n a -n b in a project named @acme/cron-op", async () => {
  const dir = scratchDir();
  try {
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "@acme/cron-op", version: "1.0.0" }));
    mkdirSync(join(dir, "handlers"));
    writeFileSync(join(dir, "handlers", "a.ts"), 'import { on } from "kobun";\non.create("v1/configmaps", () => {}, { id: "x" });\n');
    const child = Bun.spawn([process.execPath, join(root, "src", "cli.ts"), "manifests", "-n", "a", "-n", "b"],
      { cwd: dir, stdout: "pipe", stderr: "pipe" });
    const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    const objects = parseAllDocuments(stdout).map((d) => d.toJS() as Manifest).filter(Boolean);
    const named = (kind: string) => objects.filter((o) => o.kind === kind);
    expect(named("Role").map((r) => [r.metadata.name, r.metadata.namespace])).toEqual([["cron-op", "a"], ["cron-op", "b"]]);
    expect(named("RoleBinding").map((r) => r.metadata.namespace)).toEqual(["a", "b"]);
    const [deployment] = named("Deployment");
    expect(deployment?.metadata.name).toBe("cron-op");
    // Without --operator-namespace, the operator's own objects go into "default" (README, `kobun manifests --help`).
    expect(["ServiceAccount", "Deployment"].map((kind) => named(kind)[0]?.metadata.namespace)).toEqual(["default", "default"]);
    const pod = deployment?.spec.template.spec;
    const container = pod.containers[0];
    expect(container.image).toBe("cron-op:latest");
    expect(container.resources.limits.memory).toBe("384Mi");
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 65532, seccompProfile: { type: "RuntimeDefault" } });
    expect(container.securityContext).toMatchObject({
      allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] },
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 30_000);
