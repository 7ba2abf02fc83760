// Issue 30 end to end, on each target: handlers named by the example CRD's short name "kex", its
// singular and its kind (as kubectl accepts them) run on kobunexamples as the real API server's
// discovery serves them (shortNames, singularName), webhooks included: the validator on "kex"
// refuses a write the API server sends it. In-process run() against the target, serving its
// webhooks at https://127.0.0.1:<port> (`--webhooks-url`), configuration deleted at the end.
//
//   cd test/e2e && KOBUN_E2E_TARGET=cluster bun test ./resource-names.e2e.ts

import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/registry.ts";
import { AdmissionError } from "../../src/declaring/kinds/webhooks.ts";
import { KubeClient } from "../../src/kube/client.ts";
import type { Resource } from "../../src/kube/types.ts";
import { run } from "../../src/runtime/operator.ts";
import { Logger, memorySink } from "../../src/util/log.ts";
import { createNamespace, eventually, EXAMPLES, getOrUndefined, uniqueName } from "./harness/kube.ts";
import { ROOT } from "./harness/operator.ts";
import { targetSuite } from "./harness/suite.ts";
import { selectedTargets, type TargetName } from "./harness/target.ts";

const CONFIGURATIONS: Resource = { group: "admissionregistration.k8s.io", version: "v1", plural: "validatingwebhookconfigurations", kind: "ValidatingWebhookConfiguration", namespaced: false, statusSubresource: false };
const FORMS = ["kex", "kobunexample", "KobunExample"] as const;

describe.each(selectedTargets())("handlers named by short name, singular and kind against %s", (targetName: TargetName) => {
  const need = targetSuite(targetName, { crds: [join(ROOT, "handlers/kobunexample.crd.yaml")], cleanup: [EXAMPLES] });

  test("handlers on \"kex\", \"kobunexample\" and \"KobunExample\" run, and the validator on \"kex\" is called", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-names");
    const webhooks = uniqueName("wh-names");
    const ran = new Set<string>();
    const registry = new Registry();
    FORMS.forEach((form, i) => {
      const saw = (kind: string) => ({ name }: { name?: string }) => void (name === "named" && ran.add(`${kind} ${form}`));
      registry.on.create(form, saw("create"), { id: `create-${i}` });
      registry.on.update(form, saw("update"), { id: `update-${i}` });
      registry.on.event(form, saw("event"), { id: `event-${i}` });
      registry.on.timer(form, saw("timer"), { id: `timer-${i}`, interval: 0.5 });
    });
    registry.on.validate("kex", ({ object }) => {
      if (object.spec?.size === 0) throw new AdmissionError("size 0 refused by the validator on kex");
    }, { id: "size" });
    const settings = resolveSettings({ flags: { namespaces: [ns], standalone: true, webhooksUrl: "https://127.0.0.1:0", webhooksName: webhooks } });
    const client = await KubeClient.connect({ kubeconfig: t.kubeconfigPath });
    const stop = new AbortController();
    const started = Promise.withResolvers<void>();
    const running = run({ signal: stop.signal, settings, client, registry, logger: new Logger(memorySink("error")), onStarted: () => started.resolve() });
    try {
      await Promise.race([started.promise, running.then(() => { throw new Error("the operator ended before it started"); })]);
      await t.client.create(EXAMPLES, ns, { apiVersion: "kobun.dev/v1", kind: "KobunExample", metadata: { name: "named" }, spec: { size: 1 } });
      const missing = (kinds: string[]) => kinds.flatMap((kind) => FORMS.map((form) => `${kind} ${form}`)).filter((pair) => !ran.has(pair));
      await eventually("create, event and timer handlers by every name", () => missing(["create", "event", "timer"]).length === 0, { timeoutMs: 30_000 }).catch(() => undefined);
      expect(missing(["create", "event", "timer"])).toEqual([]);
      await t.client.patch(EXAMPLES, ns, "named", { spec: { size: 2 } });
      await eventually("update handlers by every name", () => missing(["update"]).length === 0, { timeoutMs: 30_000 }).catch(() => undefined);
      expect(missing(["update"])).toEqual([]);

      // The API server loads a new webhook configuration a moment after it is written.
      const refused = await eventually("the validator on kex refusing size 0", async () => {
        const name = uniqueName("zero");
        const outcome = await t.client.create(EXAMPLES, ns, { apiVersion: "kobun.dev/v1", kind: "KobunExample", metadata: { name }, spec: { size: 0 } })
          .then(() => undefined, (error: Error) => error.message);
        return outcome;
      }, { timeoutMs: 30_000, intervalMs: 200 });
      expect(refused).toContain("size 0 refused by the validator on kex");
    } finally {
      stop.abort();
      await running.catch(() => undefined);
      client.close();
      if (await getOrUndefined(t.client, CONFIGURATIONS, null, webhooks)) await t.client.delete(CONFIGURATIONS, null, webhooks);
    }
  }, 120_000);
});
