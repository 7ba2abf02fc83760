// The compiled operator's `run` execs itself once with JavaScriptCore's FTL tier off
// (src/cli/engine.ts): the process the test started (the same PID) runs with
// BUN_JSC_useFTLJIT=0 in its environment and handles objects; a value given is kept.
//
//   cd test/e2e && KOBUN_E2E_TARGET=cluster bun test ./engine.e2e.ts

import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createNamespace, eventually, EXAMPLES } from "./harness/kube.ts";
import { ROOT, startOperator } from "./harness/operator.ts";
import { selectedTargets, type TargetName } from "./harness/target.ts";
import { targetSuite } from "./harness/suite.ts";

const EXAMPLE_CRD = join(ROOT, "handlers/kobunexample.crd.yaml");

/** The variable as the running process's environment has it (/proc: what its exec was given). */
function engineVariable(pid: number): string | undefined {
  const entries = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
  return entries.find((entry) => entry.startsWith("BUN_JSC_useFTLJIT="))?.slice("BUN_JSC_useFTLJIT=".length);
}

describe.each(selectedTargets())("the engine's options [%s]", (targetName: TargetName) => {
  const need = targetSuite(targetName, { crds: [EXAMPLE_CRD], cleanup: [EXAMPLES] });

  for (const [given, expected] of [[undefined, "0"], ["1", "1"]] as const) {
    test(`run ${given === undefined ? "without BUN_JSC_useFTLJIT: execs in place with it at 0" : `with BUN_JSC_useFTLJIT=${given}: keeps it`}, and handles an object`, async () => {
      const t = need();
      const ns = await createNamespace(t.client, "engine");
      const op = startOperator("op", t.kubeconfigPath, ["--standalone", "-n", ns], undefined, given === undefined ? {} : { BUN_JSC_useFTLJIT: given });
      try {
        await t.client.create(EXAMPLES, ns, { apiVersion: "kobun.dev/v1", kind: "KobunExample", metadata: { name: "one" }, spec: { size: 1 } });
        await eventually("the object handled", async () => (await t.client.get(EXAMPLES, ns, "one")).status?.create_fn || undefined, { timeoutMs: 20_000 })
          .catch((e) => { throw new Error(`${e.message}\n${op.tail()}`); });
        expect(engineVariable(op.pid)).toBe(expected);
      } finally {
        expect((await op.stop("SIGTERM", 10_000)).code).toBe(0);
      }
    }, 40_000);
  }
});
