// dryRun=All on every kind of write, on the real kube-apiserver as on the sandbox: the answer is
// what would be stored (a created object gets a uid but no resourceVersion; an updated, patched
// or deleted one keeps the stored resourceVersion), nothing is stored, no watch event is sent,
// and admission webhooks are called with `dryRun: true`. Any value but "All" is refused with
// the server's own words. The webhook is an HTTPS server in this process recording its calls.
//
//   cd test/e2e && KOBUN_E2E_TARGET=cluster bun test ./dry-run.e2e.ts

import { describe, expect, test } from "bun:test";
import type { Resource } from "../../src/kube/types.ts";
import { createNamespace, eventually, rawRequest, rawWatch, uniqueName } from "./harness/kube.ts";
import { recordingWebhook } from "./harness/recording-webhook.ts";
import { targetSuite } from "./harness/suite.ts";
import { selectedTargets, type TargetName } from "./harness/target.ts";

const CONFIGURATIONS: Resource = { group: "admissionregistration.k8s.io", version: "v1", plural: "validatingwebhookconfigurations", kind: "ValidatingWebhookConfiguration", namespaced: false, statusSubresource: false };
const CONFIGMAPS: Resource = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false };

/** A webhook recording each call's operation, name and dryRun. */
const recordingDryRuns = (run: string) => recordingWebhook(run, ["configmaps"], ["CREATE", "UPDATE", "DELETE"],
  (request) => [request.operation, request.name, request.dryRun] as [string, string, boolean]);

describe.each(selectedTargets())("dryRun=All on %s", (targetName: TargetName) => {
  const need = targetSuite(targetName, { crds: [], cleanup: [] });

  test("create, update, every patch type and delete with dryRun=All answer what would be stored, store nothing, send no event, and tell the webhooks", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-dryrun");
    const run = uniqueName("dry");
    const labels = { run };
    const webhook = await recordingDryRuns(run);
    const base = `/api/v1/namespaces/${ns}/configmaps`;
    const send = async (method: string, path: string, body?: unknown, contentType?: string) => {
      const response = await rawRequest(t.client, method, path, body, contentType);
      return { status: response.status, body: (await response.json()) as any };
    };
    const stored = (name: string) => send("GET", `${base}/${name}`);
    try {
      await t.client.create(CONFIGURATIONS, null, webhook.configuration);
      // The API server loads a new configuration a moment after it is written.
      await eventually("the webhook called", async () => {
        await t.client.create(CONFIGMAPS, ns, { metadata: { name: uniqueName("probe"), labels } });
        return webhook.calls.length > 0 || undefined;
      }, { timeoutMs: 20_000, intervalMs: 100 });
      const since = (await t.client.list(CONFIGMAPS, { namespace: ns })).metadata.resourceVersion!;
      const watched = rawWatch(t.client, base, { resourceVersion: since }, { timeoutMs: 30_000, until: (ev) => ev.object?.metadata?.name === "marker" });
      watched.catch(() => {}); // awaited below; a failure before then must not leave it unhandled

      // create: a uid and a creationTimestamp, no resourceVersion; a second one is no conflict
      for (let i = 0; i < 2; i++) {
        const made = await send("POST", `${base}?dryRun=All`, { metadata: { name: "dry-made", labels }, data: { a: "1" } });
        expect(made.status).toBe(201);
        expect([typeof made.body.metadata.uid, typeof made.body.metadata.creationTimestamp, made.body.metadata.resourceVersion, made.body.data])
          .toEqual(["string", "string", undefined, { a: "1" }]);
      }
      expect((await stored("dry-made")).status).toBe(404);

      const kept = await t.client.create(CONFIGMAPS, ns, { metadata: { name: "kept", labels }, data: { a: "1" } });
      const keptRV = kept.metadata.resourceVersion;
      const sameAsStored = (answer: { status: number; body: any }, data: unknown) => {
        expect(answer.status).toBe(200);
        expect([answer.body.metadata.uid, answer.body.metadata.resourceVersion, answer.body.data]).toEqual([kept.metadata.uid, keptRV, data]);
      };
      // update and the four patch types: the changed object at the stored resourceVersion
      sameAsStored(await send("PUT", `${base}/kept?dryRun=All`, { ...kept, data: { a: "2" } }), { a: "2" });
      sameAsStored(await send("PATCH", `${base}/kept?dryRun=All`, { data: { a: "3" } }, "application/merge-patch+json"), { a: "3" });
      sameAsStored(await send("PATCH", `${base}/kept?dryRun=All`, [{ op: "replace", path: "/data/a", value: "4" }], "application/json-patch+json"), { a: "4" });
      sameAsStored(await send("PATCH", `${base}/kept?dryRun=All`, { data: { b: "5" } }, "application/strategic-merge-patch+json"), { a: "1", b: "5" });
      const applied = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "kept", labels }, data: { a: "6" } };
      sameAsStored(await send("PATCH", `${base}/kept?dryRun=All&fieldManager=e2e&force=true`, applied, "application/apply-patch+yaml"), { a: "6" });
      // apply of an object that does not exist: a create
      const appliedNew = await send("PATCH", `${base}/dry-applied?dryRun=All&fieldManager=e2e`, { ...applied, metadata: { name: "dry-applied", labels } }, "application/apply-patch+yaml");
      expect([appliedNew.status, appliedNew.body.metadata.resourceVersion, typeof appliedNew.body.metadata.uid]).toEqual([201, undefined, "string"]);
      expect((await stored("dry-applied")).status).toBe(404);
      // delete, dryRun in the query and in the DeleteOptions body
      expect((await send("DELETE", `${base}/kept?dryRun=All`)).status).toBe(200);
      expect((await send("DELETE", `${base}/kept`, { apiVersion: "v1", kind: "DeleteOptions", dryRun: ["All"] })).status).toBe(200);
      const after = await stored("kept");
      expect([after.status, after.body.metadata.resourceVersion, after.body.data, after.body.metadata.deletionTimestamp]).toEqual([200, keptRV, { a: "1" }, undefined]);

      // an object held by a finalizer: the answer is marked for deletion, the stored one is not
      const held = await t.client.create(CONFIGMAPS, ns, { metadata: { name: "held", labels, finalizers: ["e2e.kobun.dev/hold"] } });
      const marked = await send("DELETE", `${base}/held?dryRun=All`);
      expect([marked.status, typeof marked.body.metadata?.deletionTimestamp, marked.body.metadata?.resourceVersion]).toEqual([200, "string", held.metadata.resourceVersion]);
      expect((await stored("held")).body.metadata.deletionTimestamp).toBeUndefined();
      await t.client.patch(CONFIGMAPS, ns, "held", { metadata: { finalizers: null } }, { type: "merge" });

      // any other value is refused before anything else, as kube-apiserver words it
      const refusals = [
        await send("POST", `${base}?dryRun=Foo`, { metadata: { name: "dry-foo", labels } }),
        await send("PUT", `${base}/kept?dryRun=All&dryRun=Bar`, { ...kept, data: { a: "7" } }),
        await send("PATCH", `${base}/kept?dryRun=`, { data: { a: "8" } }, "application/merge-patch+json"),
        await send("DELETE", `${base}/kept?dryRun=all`),
      ];
      expect(refusals.map((r) => [r.status, r.body.reason, r.body.message])).toEqual([
        [422, "Invalid", 'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Foo"]: supported values: "All"'],
        [422, "Invalid", 'UpdateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["All","Bar"]: supported values: "All"'],
        [422, "Invalid", 'PatchOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: [""]: supported values: "All"'],
        [422, "Invalid", 'DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["all"]: supported values: "All"'],
      ]);
      expect((await stored("kept")).body.data).toEqual({ a: "1" });

      // no event for any dry run: the watch sees only the real writes, up to the marker
      await t.client.create(CONFIGMAPS, ns, { metadata: { name: "marker", labels } });
      const { events, ended } = await watched;
      expect(ended).toBe("until");
      expect(events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(["ADDED kept", "ADDED held", "MODIFIED held", "ADDED marker"]);

      const calls = webhook.calls.filter(([, name]) => !name.startsWith("probe-"));
      expect(calls).toEqual([
        ["CREATE", "dry-made", true], ["CREATE", "dry-made", true], ["CREATE", "kept", false],
        ["UPDATE", "kept", true], ["UPDATE", "kept", true], ["UPDATE", "kept", true], ["UPDATE", "kept", true], ["UPDATE", "kept", true],
        ["CREATE", "dry-applied", true], ["DELETE", "kept", true], ["DELETE", "kept", true],
        ["CREATE", "held", false], ["DELETE", "held", true], ["UPDATE", "held", false], ["CREATE", "marker", false],
      ]);
    } finally {
      await t.client.delete(CONFIGURATIONS, null, run).catch(() => {});
      webhook.server.stop(true);
    }
  }, 90_000);
});
