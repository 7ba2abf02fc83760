// Issue 30: a handler names its resource by any name discovery (and kubectl) accepts: the plural,
// the singular, the kind, a short name, each with or without the group and version. Discovery
// resolved "kex" and the resource was watched, but the registry compared plural and kind only,
// so a handler on "kex" never ran, without a word. Every handler kind, by every form, in one
// operator run() in this process against the sandbox (webhooks served as `--webhooks-url` does).

import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/registry.ts";
import { AdmissionError } from "../../src/declaring/kinds/webhooks.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { run } from "../../src/runtime/operator.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { Logger, memorySink } from "../../src/util/log.ts";
import { eventually } from "./helpers.ts";

const CRD = parse(readFileSync(new URL("../../handlers/kobunexample.crd.yaml", import.meta.url), "utf8"));
/** The example CRD's names: plural kobunexamples, singular kobunexample, kind KobunExample, short name kex. */
const FORMS = ["kex", "kex.kobun.dev/v1", "kobunexample", "KobunExample.kobun.dev"] as const;
const KINDS = ["create", "update", "field", "delete", "event", "daemon", "timer", "index", "validate", "mutate"] as const;

let sandbox: Sandbox;
let client: KubeClient;
const stop = new AbortController();
let operator: Promise<unknown>;
/** "<kind> <form>" of every handler that ran for the object "named". */
const ran = new Set<string>();

function handlersByEveryName(): Registry {
  const registry = new Registry();
  const saw = (kind: string, form: string, name: string | undefined) => void (name === "named" && ran.add(`${kind} ${form}`));
  FORMS.forEach((form, i) => {
    registry.on.create(form, ({ name }) => saw("create", form, name), { id: `create-${i}` });
    registry.on.update(form, ({ name }) => saw("update", form, name), { id: `update-${i}` });
    registry.on.field(form, { field: "spec.size", id: `field-${i}` }, ({ name }) => saw("field", form, name));
    registry.on.delete(form, ({ name }) => saw("delete", form, name), { id: `delete-${i}` });
    registry.on.event(form, ({ name }) => saw("event", form, name), { id: `event-${i}` });
    registry.on.daemon(form, async ({ name, signal }) => {
      saw("daemon", form, name);
      await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
    }, { id: `daemon-${i}` });
    registry.on.timer(form, ({ name }) => saw("timer", form, name), { id: `timer-${i}`, interval: 0.2 });
    registry.on.index(form, ({ name }) => {
      saw("index", form, name);
      return { [name]: form };
    }, { id: `index${i}` });
    registry.on.validate(form, ({ object }) => {
      saw("validate", form, object.metadata?.name);
      if (object.spec?.size === 0) throw new AdmissionError(`size 0 refused by the validator on ${form}`);
    }, { id: `validate-${i}` });
    registry.on.mutate(form, ({ object }) => saw("mutate", form, object.metadata?.name), { id: `mutate-${i}` });
  });
  return registry;
}

beforeAll(async () => {
  sandbox = await startSandbox();
  client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  await client.create({ group: "apiextensions.k8s.io", version: "v1", plural: "customresourcedefinitions", kind: "CustomResourceDefinition", namespaced: false, statusSubresource: true }, null, CRD);
  client.invalidateDiscovery();
  const settings = resolveSettings({ flags: { kubeconfig: sandbox.kubeconfigPath, namespaces: ["default"], standalone: true, webhooksUrl: "https://127.0.0.1:0" } });
  const started = Promise.withResolvers<void>();
  operator = run({ signal: stop.signal, settings, registry: handlersByEveryName(), logger: new Logger(memorySink("warn")), onStarted: () => started.resolve() });
  await Promise.race([started.promise, operator.then(() => { throw new Error("the operator ended before it started"); })]);
}, 20_000);
afterAll(async () => {
  stop.abort();
  await operator;
  client.close();
  await sandbox.stop();
});

/** The "<kind> <form>" pairs of these kinds that have not run yet. */
const missing = (kinds: readonly string[]) => kinds.flatMap((kind) => FORMS.map((form) => `${kind} ${form}`)).filter((pair) => !ran.has(pair));

/** Waits (bounded) until every form of these kinds ran; then names those that did not. */
async function expectRan(kinds: readonly string[], what: string): Promise<void> {
  await eventually(() => missing(kinds).length === 0, what, 15_000).catch(() => undefined);
  expect(missing(kinds)).toEqual([]);
}

test("handlers of every kind registered by short name, singular or kind (with or without group) run", async () => {
  const examples = await client.resolve("kobunexamples.kobun.dev/v1");
  const refused = await client.create(examples, "default", { apiVersion: "kobun.dev/v1", kind: "KobunExample", metadata: { name: "zero" }, spec: { size: 0 } }).then(() => "created", (error: Error) => error.message);
  expect(refused).toMatch(/size 0 refused by the validator on /);
  await client.create(examples, "default", { apiVersion: "kobun.dev/v1", kind: "KobunExample", metadata: { name: "named" }, spec: { size: 1 } });
  await expectRan(["create", "field", "event", "daemon", "timer", "index", "validate", "mutate"], "the create-time handlers by every name");
  await client.patch(examples, "default", "named", { spec: { size: 2 } });
  await expectRan(["update"], "the update handlers by every name");
  await client.delete(examples, "default", "named");
  await expectRan(["delete"], "the delete handlers by every name");
  expect(missing(KINDS)).toEqual([]);
}, 60_000);
