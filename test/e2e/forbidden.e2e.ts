// Permissions lacking at start-up end the binary with exit code 5 (README: "Exit codes"), on
// the real kube-apiserver's RBAC as on the sandbox's: a ServiceAccount with no Role in the
// served namespace, its token in a kubeconfig of its own, and `kobun run` under it.
//
//   cd test/e2e && KOBUN_E2E_TARGET=cluster bun test ./forbidden.e2e.ts
//
// Needs dist/kobun (`bun run build.ts`).

import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createNamespace, EXAMPLES } from "./harness/kube.ts";
import { ROOT, startOperator } from "./harness/operator.ts";
import { applyRbacAndToken } from "./harness/rbac.ts";
import { targetSuite } from "./harness/suite.ts";
import { selectedTargets, type TargetName } from "./harness/target.ts";

describe.each(selectedTargets())("403 → exit 5 against %s", (targetName: TargetName) => {
  const need = targetSuite(targetName, { crds: [join(ROOT, "handlers/kobunexample.crd.yaml")], cleanup: [EXAMPLES] });

  test("kobun run under a ServiceAccount that may not watch its namespace exits 5 at once, naming resource, namespace and verb", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-forbidden");
    const home = mkdtempSync(join(tmpdir(), "kobun-e2e-forbidden-"));
    try {
      // A ServiceAccount and nothing else: no Role, no binding.
      const serviceAccount = { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "op", namespace: ns } };
      const { kubeconfig, user } = await applyRbacAndToken(t, [serviceAccount], home);
      const op = startOperator("op-forbidden", kubeconfig, ["--standalone", "-n", ns]);
      const code = await op.exited(15_000);
      await op.stop();
      expect(code).toBe(5);
      const message = op.lines.find((l) => l.startsWith("kobun: "));
      expect(message).toMatch(new RegExp(`^kobun: permissions lacking at start-up: forbidden: cannot (list|watch) kobunexamples\\S* in namespace "${ns}"`));
      expect(message).toContain(`User "${user}"`); // the server's own words, naming who was refused
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }, 60_000);
});
