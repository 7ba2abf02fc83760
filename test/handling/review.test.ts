// Interleavings found in review: a change by someone else that arrives while a cycle runs.

import { afterEach, describe, expect, test } from "bun:test";
import { TemporaryError } from "../../src/declaring/errors.ts";
import { Registry } from "../../src/declaring/registry.ts";
import { startHarness, type Harness } from "./harness.ts";

const EX = "kobunexamples.kobun.dev/v1";
let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

describe("retries and concurrent changes", () => {
  test("a retry still fires when another writer's status-only change arrives while the handler runs", async () => {
    const registry = new Registry();
    const attempts: number[] = [];
    let otherSeen = false;
    registry.on.create(EX, async ({ retry, name, namespace }) => {
      attempts.push(retry);
      h?.poke();
      if (retry === 0) {
        // Another controller writes the status (not part of the essence) meanwhile, and its
        // watch event reaches the processor before this attempt ends.
        await h!.client.patch(h!.resource, namespace!, name!, { status: { other: "x" } }, { subresource: "status" });
        await h!.until(() => otherSeen);
        throw new TemporaryError("not yet", { delay: 0.1 });
      }
      return { done: retry };
    }, { id: "c" });
    h = await startHarness({ registry, settings: { handling: { retries: null } } }); // it retries: forever, not left to the default
    const accept = h.processor.accept.bind(h.processor);
    h.processor.accept = (event) => {
      if (event.type === "modified" && event.object.status?.other === "x") otherSeen = true;
      accept(event);
    };
    await h.create("r", {});
    const obj = await h.until(() => h!.get("r")?.status?.c && h!.get("r"), 3000);
    expect(obj.status.c).toEqual({ done: 1 });
    expect(attempts).toEqual([0, 1]);
  });
});

describe("two PATCHes of one cycle", () => {
  test("when the second PATCH of a cycle (main + /status) fails, the handler's own metadata patch is not lost and no phantom update runs", async () => {
    const registry = new Registry();
    const updates: unknown[] = [];
    let creates = 0;
    registry.on.create(EX, ({ patch }) => {
      creates++;
      patch.metadata.labels = { owner: "kobun" };
      return { ok: true };
    }, { id: "c" });
    registry.on.update(EX, ({ diff }) => {
      updates.push(diff);
      h?.poke();
    }, { id: "u" });
    let failed = false;
    let sandbox: Harness["sandbox"] | undefined;
    h = await startHarness({
      registry,
      processor: {
        client: {
          // The real client; after the first PATCH, the server refuses the next one (the other
          // half of the same cycle), as a crash or an admission webhook would stop it.
          patch: (async (...args: Parameters<Harness["client"]["patch"]>) => {
            const result = await h!.client.patch(...args);
            if (!failed) {
              failed = true;
              sandbox!.faults.failNext(1, 500, { verb: "patch", plural: "kobunexamples" });
            }
            queueMicrotask(() => h?.poke());
            return result;
          }) as Harness["client"]["patch"],
          get: (...args: Parameters<Harness["client"]["get"]>) => h!.client.get(...args),
        },
      },
    });
    sandbox = h.sandbox;
    await h.create("two", { size: 1 });
    // Done when the handler's result is in and its label is part of the diff base.
    const obj = await h.until(() => {
      const o = h!.get("two");
      return o?.status?.c && o.status.kobun?.lastHandledConfiguration?.includes('"owner"') && o;
    }, 8000);
    expect(obj.metadata.labels).toEqual({ owner: "kobun" });
    await h.processor.settled();
    expect(updates).toEqual([]);
    expect(failed).toBe(true);
    expect(creates).toBeGreaterThanOrEqual(1);
  }, 15_000);
});

describe("a status schema that prunes status.kobun", () => {
  test("the bookkeeping falls back to annotations after the handler's own metadata patch", async () => {
    const sandbox = await (await import("@kobun/sandbox")).startSandbox();
    const client = await (await import("../../src/kube/client.ts")).KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
    const { parse } = await import("yaml");
    const { readFileSync } = await import("node:fs");
    const crd = parse(readFileSync(new URL("../../handlers/kobunexample.crd.yaml", import.meta.url), "utf8"));
    crd.spec.versions[0].schema.openAPIV3Schema.properties.status = { type: "object", properties: { c: { type: "object", "x-kubernetes-preserve-unknown-fields": true } } };
    await client.create({ group: "apiextensions.k8s.io", version: "v1", plural: "customresourcedefinitions", kind: "CustomResourceDefinition", namespaced: false, statusSubresource: true }, null, crd);
    client.close();
    const registry = new Registry();
    let creates = 0;
    registry.on.create(EX, ({ patch }) => {
      creates++;
      patch.metadata.labels = { owner: "kobun" };
      return { ok: true };
    }, { id: "c" });
    h = await startHarness({ registry, sandbox });
    try {
      await h.create("pr", { size: 1 });
      const obj = await h.until(() => {
        const o = h!.get("pr");
        return o?.status?.c && o.metadata.annotations?.["kobun.dev/last-handled-configuration"] && o;
      });
      expect(obj.metadata.labels).toEqual({ owner: "kobun" });
      expect(obj.status.kobun).toBeUndefined();
      expect(JSON.parse(obj.metadata.annotations["kobun.dev/last-handled-configuration"]).metadata.labels).toEqual({ owner: "kobun" });
      await h.processor.settled();
      expect(creates).toBe(1);
    } finally {
      await h.stop();
      h = undefined;
      await sandbox.stop();
    }
  });
});
