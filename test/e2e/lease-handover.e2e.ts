// Lease handover on each target (issue 11, defect 2): two in-process operators in lease mode,
// each behind its own TCP proxy; the holder's proxy is blackholed while its 9-second handler
// runs. The holder must freeze at its renew deadline and stop the handler before the lease can
// expire, so the standby's run of the same handler on the same object starts only after the
// holder's ended: overlap 0 ms, measured from each replica's own start and end records.
//
//   cd test/e2e && KOBUN_E2E_TARGET=cluster bun test ./lease-handover.e2e.ts

import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import type { Resource } from "../../src/kube/types.ts";
import { sleep } from "../../src/util/abort.ts";
import { eventually as until } from "../runtime/helpers.ts";
import { cutOffMidHandler, overlapOf, type ApiServer } from "../runtime/lease-replicas.ts";
import { createNamespace, uniqueName } from "./harness/kube.ts";
import { targetSuite } from "./harness/suite.ts";
import { selectedTargets, type TargetName } from "./harness/target.ts";

const LEASES: Resource = { group: "coordination.k8s.io", version: "v1", plural: "leases", kind: "Lease", namespaced: true, statusSubresource: false };

describe.each(selectedTargets())("lease handover against %s", (targetName: TargetName) => {
  const need = targetSuite(targetName, { crds: [], cleanup: [] });

  test("a holder cut off from the API server mid-handler has stopped it before the standby starts it (0 ms overlap)", async () => {
    const target = need();
    const namespace = await createNamespace(target.client, "e2e-lease");
    const api: ApiServer = { url: target.url, kubeconfig: readFileSync(target.kubeconfigPath, "utf8"), client: target.client, namespace };
    const scenario = uniqueName("lease-cut");
    const { spans, holder, standby, cutAt } = await cutOffMidHandler(api, scenario, "500ms", (signal) => sleep(9000, signal).then(() => {}));
    try {
      await until(() => spans.some((s) => s.replica === "standby"), "the standby to start the handler", 15_000);
      await until(() => spans.every((s) => s.replica !== "holder" || s.end !== undefined), "the holder's handler to end", 15_000);
      const m = overlapOf(spans, cutAt);
      console.log(`[${targetName}] cut → holder's handler ended ${m.holderEndedMs.toFixed(0)} ms; cut → standby's started ${m.standbyStartedMs.toFixed(0)} ms; overlap ${m.overlapMs.toFixed(0)} ms (gap ${m.gapMs.toFixed(0)} ms)`);
      expect(m.overlapMs).toBe(0);
      expect(holder.lines.some((l) => l.includes("lost the lease: freezing"))).toBe(true);
    } finally {
      await standby.stop();
      await holder.stop();
      // The Lease lives in "default", which outlives the suite on a cluster the user named.
      await target.client.delete(LEASES, "default", scenario).catch(() => {});
    }
  }, 45_000);
});
