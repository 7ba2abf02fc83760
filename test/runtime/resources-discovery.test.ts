// kobun.yaml's resources.<key>.version and clusterScoped, checked against discovery at
// start-up: another served version is watched instead of the preferred one; a version the
// server does not serve, or a scope that differs, stops run() with the entry named.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { Registry } from "../../src/declaring/index.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { ConfigError, parseConfigText, resolveSettings } from "../../src/config/index.ts";
import { run } from "../../src/runtime/operator.ts";
import { FatalError } from "../../src/runtime/exits.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { memorySink, Logger } from "../../src/util/log.ts";

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
  const response = await fetch(`${sandbox.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`, {
    method: "POST", headers: { "content-type": "application/json" },
    body: JSON.stringify({
      apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata: { name: "widgets.kobun.dev" },
      spec: {
        group: "kobun.dev", scope: "Namespaced", names: { plural: "widgets", singular: "widget", kind: "Widget" },
        versions: [
          { name: "v1", served: true, storage: true, schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } } },
          { name: "v1beta1", served: true, storage: false, schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } } },
        ],
      },
    }),
  });
  expect(response.status).toBe(201);
});
afterAll(() => sandbox.stop());

function settingsWith(resources: string) {
  return resolveSettings({ file: "kobun.yaml", fileData: parseConfigText(`peering: { standalone: true }\nnamespaces: { include: [default] }\nresources:\n${resources}`, "kobun.yaml") });
}

async function start(resources: string, selector = "widgets.kobun.dev", untilWatched = false) {
  const watched = untilWatched ? sandbox.waitFor((r) => r.plural === "widgets" && r.verb === "watch", 10_000) : Promise.resolve();
  const registry = new Registry();
  registry.on.event(selector, () => {}, { id: "watch" });
  const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  const stop = new AbortController();
  const { promise: started, resolve } = Promise.withResolvers<string[]>();
  const running = run({ signal: stop.signal, settings: settingsWith(resources), client, registry, logger: new Logger(memorySink("error")), onStarted: (info) => resolve(info.resources.map((r) => `${r.group}/${r.version}/${r.plural}`)) });
  const outcome = await Promise.race([started, running.then(() => "stopped", (error: unknown) => error)]);
  await watched;
  stop.abort();
  await running.catch(() => {});
  client.close();
  return outcome;
}

test("version: another served version of the group and kind is listed and watched instead of the preferred one", async () => {
  sandbox.stats.reset();
  expect(await start("  widgets.kobun.dev: { version: v1beta1 }", "widgets.kobun.dev", true)).toEqual(["kobun.dev/v1beta1/widgets"]);
  const paths = sandbox.stats.log.filter((r) => r.plural === "widgets" && (r.verb === "list" || r.verb === "watch")).map((r) => r.path);
  expect(paths.length).toBeGreaterThan(0);
  for (const path of paths) expect(path).toStartWith("/apis/kobun.dev/v1beta1/");
}, 15_000);

test("version: one the API server does not serve stops start-up, naming the entry and the preferred version", async () => {
  const error = await start("  widgets.kobun.dev: { version: v2 }");
  expect(error).toBeInstanceOf(FatalError);
  expect((error as FatalError).message).toBe("kobun.yaml:4: resources.widgets.kobun.dev.version: the API server does not serve widgets in kobun.dev/v2 (its preferred version is v1)");
}, 15_000);

test("version: the handlers' selector already naming another version is a config error (exit 3), not ignored", async () => {
  const error = await start("  widgets.kobun.dev/v1: { version: v1beta1 }", "widgets.kobun.dev/v1");
  expect(error).toBeInstanceOf(ConfigError); // found before connecting: `kobun run` exits 3
  expect((error as ConfigError).message).toBe('kobun.yaml:4: resources.widgets.kobun.dev/v1.version: the handlers name v1 in their selector "widgets.kobun.dev/v1" (a typed token always names its version): to serve another version from kobun.yaml, name none there, e.g. "widgets.example.com"');
}, 15_000);

test("clusterScoped: a scope that differs from discovery's stops start-up; the right one starts", async () => {
  const error = await start("  widgets.kobun.dev: { clusterScoped: true }");
  expect(error).toBeInstanceOf(FatalError);
  expect((error as FatalError).message).toBe("kobun.yaml:4: resources.widgets.kobun.dev.clusterScoped: expected a cluster-scoped resource, but the API server serves widgets.kobun.dev namespaced");
  expect(await start("  widgets.kobun.dev: { clusterScoped: false }")).toEqual(["kobun.dev/v1/widgets"]);
}, 15_000);
