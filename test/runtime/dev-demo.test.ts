// `kobun dev --demo` on a CRD with a strict schema (only declared fields kept): the demo's
// `spec.demo` change is pruned by the API server, so the update step changes a label instead
// and the operator's update handler still runs; the walk-through does not time out.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/index.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { applyManifests, runDemo } from "../../src/runtime/dev.ts";
import { run } from "../../src/runtime/operator.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { Logger, memorySink } from "../../src/util/log.ts";

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: { name: strictthings.demo.test }
spec:
  group: demo.test
  scope: Namespaced
  names: { kind: StrictThing, plural: strictthings, singular: strictthing }
  versions:
    - name: v1
      served: true
      storage: true
      subresources: { status: {} }
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec: { type: object, properties: { size: { type: integer } } }
            status: { type: object, x-kubernetes-preserve-unknown-fields: true }
`;
const SAMPLE = "apiVersion: demo.test/v1\nkind: StrictThing\nmetadata: { name: strict-demo, namespace: default }\nspec: { size: 1 }\n";

let sandbox: Sandbox;
beforeAll(async () => (sandbox = await startSandbox()));
afterAll(() => sandbox.stop());

test("the demo's update step on a strict schema changes a label, and the update handler sees it", async () => {
  const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  const logger = new Logger(memorySink("error"));
  const stop = new AbortController();
  const manifests = [{ name: "strictthing.crd.yaml", text: CRD }, { name: "strictthing.sample.yaml", text: SAMPLE }];
  const updates: string[] = [];
  const registry = new Registry();
  registry.on.create("strictthings.demo.test/v1", () => {}, { id: "create" });
  registry.on.update("strictthings.demo.test/v1", ({ body }) => void updates.push(body.metadata.labels?.demo ?? "none"), { id: "update" });
  registry.on.delete("strictthings.demo.test/v1", () => {}, { id: "delete" });
  let running: Promise<unknown> | undefined;
  const printed: string[] = [];
  const log = console.log;
  console.log = (line: string) => void printed.push(line);
  try {
    await applyManifests(client, manifests, logger, stop.signal);
    running = run({ signal: stop.signal, client, registry, logger, settings: resolveSettings({ flags: { namespaces: ["default"], standalone: true } }) });
    expect(await runDemo(client, manifests, logger, stop.signal, registry)).toBe(true);
  } finally {
    console.log = log;
    stop.abort();
    await running;
    client.close();
  }
  expect(updates).toEqual([expect.stringMatching(/^updated-\d+$/)]);
  expect(printed.map((l) => l.replace(/: status=.*/, ""))).toEqual([
    "demo: created StrictThing/strict-demo", "demo: updated StrictThing/strict-demo", "demo: deleted StrictThing/strict-demo: gone (finalizer released)",
  ]);
}, 20_000);

test("a sample the API server refuses (its schema gained a required field) fails the demo naming the sample and the field", async () => {
  const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  const stop = new AbortController();
  const required = CRD.replaceAll("strictthing", "requiredthing").replace("kind: StrictThing", "kind: RequiredThing")
    .replace("spec: { type: object, properties: { size: { type: integer } } }",
      "spec: { type: object, required: [times], properties: { size: { type: integer }, times: { type: integer } } }");
  const sample = SAMPLE.replace("StrictThing", "RequiredThing").replace("strict-demo", "required-demo");
  const manifests = [{ name: "requiredthing.crd.yaml", text: required }, { name: "requiredthing.sample.yaml", text: sample }];
  try {
    await applyManifests(client, manifests, new Logger(memorySink("error")), stop.signal);
    const failed = await runDemo(client, manifests, new Logger(memorySink("error")), stop.signal, new Registry()).catch((e: Error) => e);
    expect(failed).toBeInstanceOf(Error);
    expect((failed as Error).message).toStartWith("the sample RequiredThing/required-demo (a *.sample.yaml beside the handlers) was refused: ");
    expect((failed as Error).message).toContain("spec.times: Required value");
  } finally {
    stop.abort();
    client.close();
  }
});
