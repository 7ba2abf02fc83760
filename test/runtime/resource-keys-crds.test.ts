// kobun.yaml's `resources:` keyed by a kind, singular or short name: run() knows them from the same
// CRDs `kobun manifests` reads (defineResource's and the CRD files beside the handlers, `run({ crds })`),
// so a key manifests accepts is not refused at start; refused, the message says where such names come
// from; and messages name the key as the file wrote it. An alias that is also another resource's name
// is ambiguous: refused, naming both.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { ConfigError, parseConfigText, resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/index.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { run } from "../../src/runtime/operator.ts";
import { checkResourceKeys } from "../../src/runtime/resources.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { Logger, memorySink } from "../../src/util/log.ts";

/** The example CRD: plural kobunexamples, kind KobunExample, short name kex. */
const CRD = parse(readFileSync(new URL("../../handlers/kobunexample.crd.yaml", import.meta.url), "utf8"));
let sandbox: Sandbox;
beforeAll(async () => (sandbox = await startSandbox()));
afterAll(() => sandbox.stop());

const settingsFrom = (text: string) =>
  resolveSettings({ file: "kobun.yaml", fileData: parseConfigText(`peering: { standalone: true }\n${text}`, "kobun.yaml") });

function registryWithIndex(): Registry {
  const registry = new Registry();
  registry.on.create("v1/configmaps", () => {}, { id: "cm" });
  registry.on.index("kobunexamples.kobun.dev/v1", ({ name }) => ({ [name]: true }), { id: "examples" });
  return registry;
}

test("without the CRD a short name is refused, saying that such names come from a CRD kobun knows", async () => {
  const settings = settingsFrom("resources:\n  kex: { enabled: false }");
  const error = await run({ settings, registry: registryWithIndex(), logger: new Logger(memorySink("error")) })
    .catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ConfigError);
  expect((error as ConfigError).issues.map((issue) => issue.line)).toEqual([
    "kobun.yaml:3: resources.kex: no handler registers this resource (registered: v1/configmaps, " +
      "kobunexamples.kobun.dev/v1); a kind, singular or short name is known only for a resource whose CRD kobun " +
      "knows (defineResource, or a CRD file beside the handlers)",
  ]);
});

test("with the CRD files given (as kobun run gives them), the short name keys the entry; the warning names it as written", async () => {
  const settings = settingsFrom("resources:\n  kex: { enabled: false }");
  const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  const sink = memorySink("warn");
  const stop = new AbortController();
  const { promise: started, resolve } = Promise.withResolvers<string[]>();
  const running = run({
    signal: stop.signal, settings, client, registry: registryWithIndex(), logger: new Logger(sink), crds: [CRD],
    onStarted: (info) => resolve(info.resources.map((r) => r.plural)),
  });
  try {
    expect(await started).toEqual(["configmaps"]);
    const warned = sink.lines.filter((l) => l.includes("an index stays empty"));
    expect(warned).toHaveLength(1);
    expect(warned[0]).toContain("resources.kex.enabled");
    expect(warned[0]).not.toContain("resources.kobunexamples.kobun.dev/v1.enabled");
  } finally {
    stop.abort();
    await running;
    client.close();
  }
}, 15_000);

test("an alias that is also the name of another registered resource is refused as ambiguous, naming both", () => {
  const settings = settingsFrom("resources:\n  widgets: { enabled: false }");
  const aliases = new Map([["gadgets.x.io/v1", "widgets"]]);
  const thrown = (() => {
    try {
      return checkResourceKeys(settings, ["gadgets.x.io/v1", "widgets.y.io/v1"], aliases);
    } catch (error) {
      return error;
    }
  })();
  expect(thrown).toBeInstanceOf(ConfigError);
  expect((thrown as ConfigError).issues.map((issue) => issue.line)).toEqual([
    "kobun.yaml:3: resources.widgets: names 2 registered resources (gadgets.x.io/v1 (alias widgets), widgets.y.io/v1): " +
      "write the one meant, e.g. with its group",
  ]);
});
