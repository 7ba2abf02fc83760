// Issue 11, defect 1, end to end: the compiled operator serves 300 namespaces matched by a glob,
// each with its own peering object, against each target. Before the connection budget, a
// watch per namespace and resource (plus one per peering object) took all 256 of Bun's fetch
// slots and nothing was handled; now each resource and the peering objects are watched once
// cluster-wide and every object gets its create handler's status.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { KubeObject } from "../../src/kube/types.ts";
import { eventually, EXAMPLES, NAMESPACES, uniqueName } from "./harness/kube.ts";
import { killAllOperators, ROOT, startOperator } from "./harness/operator.ts";
import { selectedTargets, startTarget, type Target, type TargetName } from "./harness/target.ts";

const EXAMPLE_CRD = join(ROOT, "handlers/kobunexample.crd.yaml");
const PEERING_CRDS = join(ROOT, "crds/peering-kobun.dev.yaml");
const COUNT = 300;

describe.each(selectedTargets())("many namespaces against %s", (targetName: TargetName) => {
  let target: Target | undefined;
  let setupError: unknown;
  const prefix = uniqueName("e2e-many");
  const namespaces = Array.from({ length: COUNT }, (_, i) => `${prefix}-${i}`);

  beforeAll(async () => {
    try {
      target = await startTarget(targetName, { crds: [EXAMPLE_CRD, PEERING_CRDS] });
      const client = target.client;
      for (let i = 0; i < COUNT; i += 20) {
        await Promise.all(namespaces.slice(i, i + 20).map(async (ns) => {
          await client.create(NAMESPACES, null, { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
          const body: KubeObject = { apiVersion: "kobun.dev/v1", kind: "KobunExample", metadata: { name: "one", namespace: ns }, spec: { field: "value", items: ["a"] } };
          await client.create(EXAMPLES, ns, body);
        }));
      }
    } catch (e) {
      setupError = e;
      await target?.stop().catch(() => {});
      target = undefined;
    }
  }, 180_000);

  afterAll(async () => {
    await killAllOperators();
    if (target && process.env.KOBUN_E2E_KUBECONFIG && targetName === "cluster") {
      // No operator runs any more to release its finalizers.
      for (const ns of namespaces) {
        await target.client.patch(EXAMPLES, ns, "one", { metadata: { finalizers: null } }).catch(() => {});
        await target.client.delete(NAMESPACES, null, ns).catch(() => {});
      }
    }
    await target?.stop();
  }, 60_000);

  test(`${COUNT} namespaces by glob, a peering object each: every object handled, one watch per resource`, async () => {
    if (!target) throw new Error(`e2e target "${targetName}" is not available: ${setupError instanceof Error ? setupError.message : String(setupError)}`);
    const t = target;
    const started = performance.now();
    const op = startOperator("many", t.kubeconfigPath, ["-n", `${prefix}-*`]);
    let handled = 0;
    try {
      await eventually(`status.create_fn in all ${COUNT} namespaces`, async () => {
        const list = await t.client.listAll(EXAMPLES, {});
        handled = list.items.filter((o) => o.metadata.namespace?.startsWith(`${prefix}-`) && o.status?.create_fn).length;
        return handled === COUNT;
      }, { timeoutMs: 150_000, intervalMs: 500 });
    } catch (e) {
      await op.stop("SIGKILL").catch(() => {});
      throw new Error(`${(e as Error).message}; handled ${handled}\n${op.tail(20)}`);
    }
    const ms = Math.round(performance.now() - started);
    expect(op.logged(/one cluster-wide watch per resource/)).toBe(true);
    expect(op.logged(/waiting for a connection/)).toBe(false);
    const { code } = await op.stop();
    expect(code).toBe(0);
    console.log(`e2e ${targetName}: namespaces=${COUNT} peering=per-namespace handled-all-ms=${ms}`);
  }, 200_000);
});
