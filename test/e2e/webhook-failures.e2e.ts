// What a client meets when an admission handler fails, on each target (docs/webhooks.md): a
// handler that throws refuses the write with a generic message (its own text only in the log) and
// code 403; one still running at its timeout is cut and answered in time: refused with 504 under
// failurePolicy Fail, allowed with a warning under Ignore. In-process run() against the target,
// serving at https://127.0.0.1:<port> through a uniquely named configuration `wh-op-*` (deleted
// at the end), writing ConfigMaps labelled `e2e.kobun.dev/admission=<case>` in `e2e-webhook-fail-*`
// (and one in `default`, refused: the webhook is not kept to the namespaces the operator watches).
//
//   cd test/e2e && KOBUN_E2E_TARGET=cluster bun test ./webhook-failures.e2e.ts

import { describe, expect, test } from "bun:test";
import { Registry } from "../../src/declaring/registry.ts";
import { createNamespace, rawRequest, uniqueName, warningsOf } from "./harness/kube.ts";
import { startWebhookOperator, untilCalled } from "./harness/webhook-operator.ts";
import { targetSuite } from "./harness/suite.ts";
import { selectedTargets, type TargetName } from "./harness/target.ts";

const LABEL = "e2e.kobun.dev/admission";

describe.each(selectedTargets())("admission handlers that fail, called by %s", (targetName: TargetName) => {
  const need = targetSuite(targetName, { crds: [], cleanup: [] });

  test("a throw refuses with 403 and no detail; a timeout refuses with 504 (Fail) or allows with a warning (Ignore)", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-webhook-fail");
    const seen = new Set<string>();
    const registry = new Registry();
    const hang = (id: string) => (ctx: { signal: AbortSignal }) => {
      seen.add(id);
      // Waits until kobun cuts it: the answer must come from kobun's timeout, not the handler.
      return new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve()));
    };
    registry.on.validate("configmaps", () => void seen.add("probe"), { id: "probe", labels: { [LABEL]: "probe" } });
    registry.on.validate("configmaps", () => {
      throw new Error("password=hunter2");
    }, { id: "crash", labels: { [LABEL]: "crash" } });
    registry.on.validate("configmaps", hang("slow-fail"), { id: "slow-fail", labels: { [LABEL]: "slow-fail" }, timeoutSeconds: 2 });
    registry.on.validate("configmaps", hang("slow-ignore"), {
      id: "slow-ignore", labels: { [LABEL]: "slow-ignore" }, timeoutSeconds: 2, failurePolicy: "Ignore",
    });
    const operator = await startWebhookOperator(t, ns, registry);
    const write = (label: string, where = ns) => rawRequest(t.client, "POST", `/api/v1/namespaces/${where}/configmaps`, {
      apiVersion: "v1", kind: "ConfigMap", metadata: { name: uniqueName(label), labels: { [LABEL]: label } },
    });
    try {
      await untilCalled(t, ns, { [LABEL]: "probe" }, () => seen.has("probe"));

      const crashed = await write("crash");
      const crash = (await crashed.json()) as { code: number; message: string };
      expect([crashed.status, crash.code]).toEqual([403, 403]);
      expect(crash.message).toBe(`admission webhook "crash.${operator.name}.kobun.dev" denied the request: `
        + "admission handler crash failed; the operator's log has the details");
      // The configuration has no namespaceSelector: a namespace the operator does not watch is refused too.
      expect((await write("crash", "default")).status).toBe(403);

      const failed = await write("slow-fail");
      const fail = (await failed.json()) as { code: number; message: string };
      expect([failed.status, fail.code, seen.has("slow-fail")]).toEqual([504, 504, true]);
      expect(fail.message).toBe(`admission webhook "slow-fail.${operator.name}.kobun.dev" denied the request: `
        + "admission handler slow-fail did not answer within its timeout (2s)");

      const ignored = await write("slow-ignore");
      expect([ignored.status, seen.has("slow-ignore")]).toEqual([201, true]);
      expect(warningsOf(ignored)).toEqual(
        ["admission handler slow-ignore did not answer within its timeout (2s); ignored (failurePolicy: Ignore)"]);
    } finally {
      await operator.stop();
    }
  }, 90_000);
});
