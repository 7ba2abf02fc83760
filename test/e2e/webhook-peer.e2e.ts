// Who calls a webhook, on the real kube-apiserver as on the sandbox: the API server presents the
// client certificate and bearer token its admission kubeConfigFile gives for every webhook ("*"),
// and a handler sees them as ctx.peer (verified against webhooks.clientCaFile, required) and the
// `authorization` header. The cluster target is started with --admission-control-config-file;
// the sandbox with `webhookClient` (a cluster named by KOBUN_E2E_KUBECONFIG must be configured
// so itself). In-process operator; configuration `wh-op-*` deleted at the end.
//
//   cd test/e2e && KOBUN_E2E_TARGET=cluster bun test ./webhook-peer.e2e.ts

import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sandboxCerts } from "../../packages/sandbox/src/tls.ts";
import { Registry } from "../../src/declaring/registry.ts";
import type { AdmissionContext } from "../../src/declaring/kinds/webhooks.ts";
import { createNamespace } from "./harness/kube.ts";
import { startWebhookOperator, untilCalled } from "./harness/webhook-operator.ts";
import { targetSuite } from "./harness/suite.ts";
import { selectedTargets, type TargetName } from "./harness/target.ts";

const TOKEN = "webhook-caller-token";
const PEER_LABELS = { "e2e.kobun.dev/admission": "peer" };

// One CA signs the API server's client certificate (CN=kobun-sandbox, O=system:masters); the operator trusts it.
const certs = sandboxCerts();
const dir = mkdtempSync(join(tmpdir(), "kobun-webhook-peer-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  writeFileSync(join(dir, name), text);
  return join(dir, name);
};
const clientCa = file("client-ca.crt", certs.ca);
const kubeconfig = file("webhook-kubeconfig.yaml", [
  "apiVersion: v1", "kind: Config", "users:", '- name: "*"', "  user:",
  `    client-certificate: ${file("client.crt", certs.clientCert)}`, `    client-key: ${file("client.key", certs.clientKey)}`, `    token: ${TOKEN}`, "",
].join("\n"));
const plugin = (name: string) => [
  `- name: ${name}`, "  configuration:", "    apiVersion: apiserver.config.k8s.io/v1", "    kind: WebhookAdmissionConfiguration", `    kubeConfigFile: ${kubeconfig}`,
];
const admissionConfig = file("admission.yaml", [
  "apiVersion: apiserver.config.k8s.io/v1", "kind: AdmissionConfiguration", "plugins:",
  ...plugin("ValidatingAdmissionWebhook"), ...plugin("MutatingAdmissionWebhook"), "",
].join("\n"));

describe.each(selectedTargets())("the caller's certificate and token reach the handler on %s", (targetName: TargetName) => {
  const need = targetSuite(targetName, {
    crds: [], cleanup: [], apiserverArgs: [`--admission-control-config-file=${admissionConfig}`],
    sandbox: { webhookClient: { cert: certs.clientCert, key: certs.clientKey, token: TOKEN } },
  });

  test("ctx.peer is the API server's verified client certificate and ctx.headers carries its token", async () => {
    const calls: AdmissionContext[] = [];
    const registry = new Registry();
    registry.on.validate("configmaps", (ctx) => void calls.push(ctx), { id: "peer", labels: PEER_LABELS });
    const t = need();
    const ns = await createNamespace(t.client, "e2e-webhook-peer");
    const operator = await startWebhookOperator(t, ns, registry, { webhooks: { clientCaFile: clientCa, clientCertRequired: true } });
    try {
      await untilCalled(t, ns, PEER_LABELS, () => calls.length > 0);
      const [call] = calls;
      expect(call!.peer?.subject).toEqual({ CN: "kobun-sandbox", O: "system:masters" });
      expect(call!.peer?.fingerprint256).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
      expect(call!.headers.authorization).toBe(`Bearer ${TOKEN}`);
    } finally {
      await operator.stop();
    }
  }, 120_000);
});
