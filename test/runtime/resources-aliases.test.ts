// Aliases of resources in kobun.yaml: a handler module names a resource with
// `resource(selector, { alias })`; a `resources:` key may then be the alias (its settings
// apply to that resource), unknown keys are answered with the aliases beside the selectors,
// and contradicting aliases are refused when the handler is registered.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { Registry, resource } from "../../src/declaring/index.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { ConfigError, parseConfigText, resolveSettings } from "../../src/config/index.ts";
import { run } from "../../src/runtime/operator.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { memorySink, Logger } from "../../src/util/log.ts";

let sandbox: Sandbox;
beforeAll(async () => (sandbox = await startSandbox()));
afterAll(() => sandbox.stop());

const settingsFrom = (text: string) =>
  resolveSettings({ file: "kobun.yaml", fileData: parseConfigText(`peering: { standalone: true }\nnamespaces: { include: [default] }\n${text}`, "kobun.yaml") });

const Maps = resource("configmaps", { alias: "maps" });

test("an alias is a resources: key: its entry's labelSelector goes with the resource's LIST and WATCH", async () => {
  const registry = new Registry();
  registry.on.event(Maps, () => {}, { id: "maps" });
  const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  const stop = new AbortController();
  sandbox.stats.reset();
  const watched = sandbox.waitFor((r) => r.plural === "configmaps" && r.verb === "watch", 10_000);
  const running = run({ signal: stop.signal, settings: settingsFrom("resources:\n  maps: { labelSelector: app=web }"), client, registry, logger: new Logger(memorySink("error")) });
  try {
    await watched;
    const requests = sandbox.stats.log.filter((r) => r.plural === "configmaps" && (r.verb === "list" || r.verb === "watch"));
    expect(requests.map((r) => new URLSearchParams(r.query).get("labelSelector"))).toEqual(requests.map(() => "app=web"));
  } finally {
    stop.abort();
    await running;
    client.close();
  }
}, 15_000);

test("an unknown key is answered with the registered selectors and their aliases; a near alias is suggested", async () => {
  const registry = new Registry();
  registry.on.event(Maps, () => {}, { id: "maps" });
  registry.on.event("secrets", () => {}, { id: "secrets" });
  const error = await run({ settings: settingsFrom("resources:\n  mapz: {}"), registry, logger: new Logger(memorySink("error")) }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ConfigError);
  expect((error as ConfigError).issues.map((issue) => issue.line)).toEqual([
    'kobun.yaml:4: resources.mapz: no handler registers this resource; did you mean "maps"? (registered: configmaps (alias maps), secrets)' +
      "; a kind, singular or short name is known only for a resource whose CRD kobun knows (defineResource, or a CRD file beside the handlers)",
  ]);
});

test("one resource given an entry under its selector and one under its alias is a config error", async () => {
  const registry = new Registry();
  registry.on.event(Maps, () => {}, { id: "maps" });
  const error = await run({ settings: settingsFrom("resources:\n  configmaps: {}\n  maps: {}"), registry, logger: new Logger(memorySink("error")) }).catch((e: unknown) => e);
  expect((error as ConfigError).issues.map((issue) => issue.line)).toEqual([
    "kobun.yaml:5: resources.maps: configmaps has an entry under its selector already; give it one entry, under either name",
  ]);
});

test("a resource with two aliases, or an alias naming two resources, is refused when the handler is registered", () => {
  const registry = new Registry();
  registry.on.event(Maps, () => {}, { id: "maps" });
  expect(() => registry.on.event(resource("configmaps", { alias: "cms" }), () => {}, { id: "cms" })).toThrow('resource "configmaps" has two aliases, "maps" and "cms": give it one');
  expect(() => registry.on.event(resource("secrets", { alias: "maps" }), () => {}, { id: "s" })).toThrow('the alias "maps" names two resources, "configmaps" and "secrets": give each its own');
  expect(() => resource("secrets", { alias: "a/b" })).toThrow('resource("secrets", { alias: "a/b" }): an alias is letters, digits, "-", "_" and "." (like "examples")');
  // The same alias again, or the resource as a plain selector beside it, is fine.
  registry.on.create(Maps, () => {}, { id: "again" });
  registry.on.create("configmaps", () => {}, { id: "plain" });
  expect([...registry.aliases.all()]).toEqual([["configmaps", "maps"]]);
});
