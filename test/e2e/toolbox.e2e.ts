// Daemons, timers and indexes (issue 13) with the compiled e2e binary (test/e2e/handlers/toolbox.ts)
// against each target: a freeze (`kobun freeze`) stops the daemons and the resume starts them
// again; a deletion during a timer call aborts it, then the delete handler runs exactly once;
// an index is rebuilt by the relist after a freeze, without the object deleted meanwhile and
// without duplicates; on.login's ServiceAccount token replaces a refused kubeconfig's and is
// renewed past its expiresAt, and, revoked while the login fails, asked again per backoff step
// only (harness/login.ts, in-process; the revocation needs a server that refuses tokens: cluster).
//
//   cd test/e2e && KOBUN_E2E_TARGET=cluster bun test ./toolbox.e2e.ts

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { KubeObject, Resource } from "../../src/kube/types.ts";
import { createNamespace, eventually, getOrUndefined, PEERINGS, uniqueName } from "./harness/kube.ts";
import { KOBUN_E2E, ROOT, runOnce, startOperator, type Operator } from "./harness/operator.ts";
import { selectedTargets, type Target, type TargetName } from "./harness/target.ts";
import { targetSuite } from "./harness/suite.ts";
import { loginScenario } from "./harness/login.ts";

const E2E_CRDS = join(ROOT, "test/e2e/handlers/kobunflaky.crd.yaml");
const PEERING_CRDS = join(ROOT, "crds/peering-kobun.dev.yaml");
const TOOLS: Resource = { group: "e2e.kobun.dev", version: "v1", plural: "kobuntools", kind: "KobunTool", namespaced: true, statusSubresource: true };

const tool = (name: string, spec: Record<string, unknown>): KubeObject => ({ apiVersion: "e2e.kobun.dev/v1", kind: "KobunTool", metadata: { name }, spec });
const count = (op: Operator, re: RegExp, from = 0) => op.lines.slice(from).filter((l) => re.test(l)).length;

for (const targetName of selectedTargets() as TargetName[]) {
  describe(`daemons, timers, indexes [${targetName}]`, () => {
    const suite = targetSuite(targetName, { crds: [E2E_CRDS, PEERING_CRDS], cleanup: [TOOLS] });
    let setupError: unknown;
    let ns = "";
    let op: Operator | undefined;
    const peering = "toolbox";
    const need = (): { t: Target; op: Operator } => {
      const t = suite();
      if (!op) throw new Error(`e2e operator in ${t.describe} did not start: ${setupError instanceof Error ? setupError.message : String(setupError)}`);
      return { t, op };
    };
    const freeze = (t: Target) => runOnce(KOBUN_E2E, ["freeze", "--kubeconfig", t.kubeconfigPath, "--peering", peering, "-n", ns, "--lifetime", "120"]);
    const resume = (t: Target) => runOnce(KOBUN_E2E, ["resume", "--kubeconfig", t.kubeconfigPath, "--peering", peering, "-n", ns]);

    beforeAll(async () => {
      try {
        const target = suite();
        ns = await createNamespace(target.client);
        await target.client.create(PEERINGS, ns, { apiVersion: "kobun.dev/v1", kind: "KobunPeering", metadata: { name: peering, namespace: ns } });
        op = startOperator("toolbox", target.kubeconfigPath, ["-n", ns, "--peering", peering, "--priority", "0"], KOBUN_E2E);
      } catch (e) {
        setupError = e;
      }
    }, 120_000);

    afterAll(async () => {
      await op?.stop().catch(() => {});
    }, 30_000);

    test("daemons + freeze: `kobun freeze` stops every daemon, none starts while frozen, `kobun resume` starts them all again", async () => {
      const { t, op } = need();
      const a = uniqueName("daemon");
      const b = uniqueName("daemon");
      await t.client.create(TOOLS, ns, tool(a, { role: "daemon" }));
      await op.waitForLog(new RegExp(`toolbox_daemon started on ${a}`), 20_000);
      const mark = op.lines.length;
      expect((await freeze(t)).code).toBe(0);
      await op.waitForLog(new RegExp(`toolbox_daemon stopped on ${a}`), 15_000, mark);
      await t.client.create(TOOLS, ns, tool(b, { role: "daemon" }));
      // A negative claim needs a bounded wait: nothing may start for `b` while frozen.
      await Bun.sleep(1500);
      expect(count(op, new RegExp(`toolbox_daemon started on ${b}`))).toBe(0);
      expect((await resume(t)).code).toBe(0);
      await op.waitForLog(new RegExp(`toolbox_daemon started on ${b}`), 20_000, mark);
      await op.waitForLog(new RegExp(`toolbox_daemon started on ${a}`), 20_000, mark);
      expect(count(op, new RegExp(`toolbox_daemon started on ${a}`))).toBe(2);
    }, 90_000);

    test("timers + deletion: the timer's result reaches status; a deletion aborts the call in flight, then the delete handler runs once and the object goes", async () => {
      const { t, op } = need();
      const name = uniqueName("timer");
      await t.client.create(TOOLS, ns, tool(name, { role: "timer" }));
      await eventually(`${name}'s timer result in status`, async () => (await t.client.get(TOOLS, ns, name)).status?.toolbox_timer?.ticks, { timeoutMs: 20_000 })
        .catch((e) => { throw new Error(`${e.message}\n${op.tail()}`); });
      await t.client.delete(TOOLS, ns, name);
      await eventually(`${name} deleted`, async () => (await getOrUndefined(t.client, TOOLS, ns, name)) === undefined, { timeoutMs: 20_000 })
        .catch((e) => { throw new Error(`${e.message}\n${op.tail()}`); });
      await op.waitForLog(new RegExp(`toolbox_delete ran on ${name}`), 5_000);
      // Settled: no second run may follow (Kopf #882 ran the delete handlers twice).
      await Bun.sleep(1000);
      expect(count(op, new RegExp(`toolbox_delete ran on ${name}`))).toBe(1);
      const deleteAt = op.lines.findIndex((l) => l.includes(`toolbox_delete ran on ${name}`));
      const abortAt = op.lines.findIndex((l) => l.includes(`toolbox_timer aborted on ${name}`));
      if (abortAt >= 0) expect(abortAt).toBeLessThan(deleteAt);
    }, 60_000);

    test("indexes across a relist: after a freeze (one object deleted, one added meanwhile) the index holds exactly the objects there are", async () => {
      const { t, op } = need();
      const group = uniqueName("g");
      const [m1, m2, m3] = [uniqueName("m"), uniqueName("m"), uniqueName("m")];
      const reporter = uniqueName("report");
      await t.client.create(TOOLS, ns, tool(m1, { group }));
      await t.client.create(TOOLS, ns, tool(m2, { group }));
      await t.client.create(TOOLS, ns, tool(reporter, { group, role: "report" }));
      const report = (want: string[]) => eventually(`the index of ${group} to be ${want.join(",")}`, async () => {
        const got = (await t.client.get(TOOLS, ns, reporter)).status?.toolbox_report;
        return JSON.stringify(got) === JSON.stringify(want) ? got : undefined;
      }, { timeoutMs: 20_000 }).catch((e) => { throw new Error(`${e.message}\n${op.tail()}`); });
      await report([m1, m2, reporter].sort());
      const mark = op.lines.length;
      expect((await freeze(t)).code).toBe(0);
      await op.waitForLog(/freezing/i, 15_000, mark);
      await t.client.delete(TOOLS, ns, m1);
      await t.client.create(TOOLS, ns, tool(m3, { group }));
      expect((await resume(t)).code).toBe(0);
      await report([m2, m3, reporter].sort());
    }, 90_000);

    test("on.login: a ServiceAccount token from a TokenRequest replaces the kubeconfig's refused one; past its expiresAt the next request logs in again; revoked while the login fails, it is renewed once per backoff step, not per refused request", async () => {
      await loginScenario(suite(), targetName === "cluster");
    }, 60_000);
  });
}
