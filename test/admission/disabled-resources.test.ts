// kobun.yaml's `enabled: false` switches off all of a resource's handlers, its on.validate and
// on.mutate webhooks included: `kobun run` neither serves nor registers them, and
// `kobun manifests` renders none for it; the other resources' webhooks stay.

import { afterAll, expect, test } from "bun:test";
import { parseAllDocuments } from "yaml";
import { renderManifests } from "../../src/cli/manifests/manifests.ts";
import { parseConfigText, resolveSettings } from "../../src/config/index.ts";
import { AdmissionError } from "../../src/declaring/kinds/webhooks.ts";
import { Registry, registry as globalRegistry } from "../../src/declaring/registry.ts";
import { run } from "../../src/runtime/operator.ts";
import { startSandbox } from "@kobun/sandbox";
import { Logger, memorySink } from "../../src/util/log.ts";

const KOBUN_YAML = "resources:\n  v1/configmaps: { enabled: false }\n";

function denyBoth(registry: Registry): Registry {
  for (const plural of ["configmaps", "secrets"]) {
    registry.on.create(`v1/${plural}`, () => {}, { id: `see-${plural}` });
    registry.on.validate(`v1/${plural}`, () => {
      throw new AdmissionError(`no ${plural} today`);
    }, { id: `deny-${plural}` });
  }
  return registry;
}

afterAll(() => globalRegistry.clear());

test("kobun run serves and registers no webhook of a resource with enabled: false; the others' still answer", async () => {
  const sandbox = await startSandbox();
  const settings = resolveSettings({
    file: "kobun.yaml", fileData: parseConfigText(KOBUN_YAML, "kobun.yaml"),
    flags: { kubeconfig: sandbox.kubeconfigPath, namespaces: ["default"], standalone: true, webhooksUrl: "https://127.0.0.1:0" },
  });
  const stop = new AbortController();
  const started = Promise.withResolvers<void>();
  const operator = run({ signal: stop.signal, settings, registry: denyBoth(new Registry()), logger: new Logger(memorySink("warn")), onStarted: () => started.resolve() });
  try {
    await Promise.race([started.promise, operator.then(() => { throw new Error("the operator ended before it started"); })]);
    const post = (plural: string) => fetch(`${sandbox.url}/api/v1/namespaces/default/${plural}`, {
      method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ metadata: { name: "x" } }),
    });
    expect((await post("configmaps")).status).toBe(201);
    const denied = await post("secrets");
    expect(denied.status).toBe(400);
    expect(await denied.text()).toContain("no secrets today");
  } finally {
    stop.abort();
    await operator;
    await sandbox.stop();
  }
});

test("kobun manifests renders no webhook of a resource with enabled: false", () => {
  denyBoth(globalRegistry);
  const settings = resolveSettings({ file: "kobun.yaml", fileData: parseConfigText(KOBUN_YAML, "kobun.yaml") });
  const text = renderManifests({ name: "op", namespace: "ops", image: "op:1", settings, selectors: globalRegistry.selectors(), manifests: [] });
  const validating = parseAllDocuments(text).map((d) => d.toJS()).find((d) => d?.kind === "ValidatingWebhookConfiguration");
  expect(validating.webhooks.map((w: { clientConfig: { service: { path: string } } }) => w.clientConfig.service.path)).toEqual(["/validate/deny-secrets"]);
});
