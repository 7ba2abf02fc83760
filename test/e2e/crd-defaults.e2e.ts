// CRD schema defaults as kube-apiserver applies them, on each target (the sandbox checked
// against the real server): absent fields and non-nullable nulls take their `default` at every
// level — inside a default just filled in, in array items, in map values — on create, on a merge
// PATCH that adds items, and on a /status write; a nullable null and values given stay.

import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { KubeObject, Resource } from "../../src/kube/types.ts";
import { createNamespace } from "./harness/kube.ts";
import { ROOT } from "./harness/operator.ts";
import { targetSuite } from "./harness/suite.ts";
import { selectedTargets, type TargetName } from "./harness/target.ts";

const DEFAULTS: Resource = { group: "e2e.kobun.dev", version: "v1", plural: "kobundefaults", kind: "KobunDefault", namespaced: true, statusSubresource: true };

describe.each(selectedTargets())("CRD schema defaults against %s", (targetName: TargetName) => {
  const need = targetSuite(targetName, { crds: [join(ROOT, "test/e2e/crds/kobundefaults.crd.yaml")], cleanup: [] });

  test("create, patch and /status fill defaults at every level, as kube-apiserver does", async () => {
    const { client } = need();
    const ns = await createNamespace(client, "e2e-defaults");
    const created = await client.create(DEFAULTS, ns, {
      apiVersion: "e2e.kobun.dev/v1", kind: "KobunDefault", metadata: { name: "d" },
      spec: { mode: null, note: null, ports: [{ port: 80 }, { port: 53, protocol: "UDP", tags: [] }], limits: { cpu: {}, memory: { max: 4, unit: "Gi" } } },
    });
    expect(created.spec).toEqual({
      replicas: 1, mode: "fast", note: null,
      tuning: { level: 3 },
      ports: [{ port: 80, protocol: "TCP", tags: ["a"] }, { port: 53, protocol: "UDP", tags: [] }],
      limits: { cpu: { max: 10 }, memory: { max: 4, unit: "Gi" } },
    });

    const patched: KubeObject = await client.patch(DEFAULTS, ns, "d", { spec: { ports: [{ port: 443 }], tuning: { extra: {} }, limits: { disk: { unit: "Ti" } } } });
    expect(patched.spec?.ports).toEqual([{ port: 443, protocol: "TCP", tags: ["a"] }]);
    expect(patched.spec?.tuning).toEqual({ level: 3, extra: { depth: 2 } });
    expect(patched.spec?.limits?.disk).toEqual({ max: 10, unit: "Ti" });

    const status = await client.patch(DEFAULTS, ns, "d", { status: { seen: 1 } }, { subresource: "status" });
    expect(status.status).toEqual({ phase: "Pending", seen: 1 });
    // A later read shows the same (the stored object carries the defaults).
    expect((await client.get(DEFAULTS, ns, "d")).spec).toEqual(patched.spec);
  });
});
