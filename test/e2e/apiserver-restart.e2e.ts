// The control plane restarts under a running operator (cluster target only: it restarts the real
// kube-apiserver). The operator's kube-apiserver is SIGKILLed; while it is down, another member of
// the control plane (a second kube-apiserver on the same etcd) takes changes the operator cannot
// see: an object created, one updated, one deleted (held by kobun's finalizer), an owned child
// deleted, a reconciled parent created. The first apiserver comes back with a new watch cache, so
// the operator's watches resume from a version it no longer has (410) and relist. Every change is
// handled once, nothing handled before runs again, the deleted child is made again (its deletion
// was seen only as an absence from the relist), and the watches are live afterwards.
//
//   cd test/e2e && KOBUN_E2E_TARGET=cluster bun test ./apiserver-restart.e2e.ts

import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveSettings } from "../../src/config/index.ts";
import { adopt } from "../../src/declaring/children.ts";
import { Registry } from "../../src/declaring/registry.ts";
import { KubeClient } from "../../src/kube/client.ts";
import type { KubeObject, Resource } from "../../src/kube/types.ts";
import { run } from "../../src/runtime/operator.ts";
import { Logger, memorySink } from "../../src/util/log.ts";
import { startCluster } from "../cluster/cluster.ts";
import { createNamespace, EXAMPLES, eventually, getOrUndefined, installCrds } from "./harness/kube.ts";
import { selectedTargets } from "./harness/target.ts";

const root = join(import.meta.dir, "..", "..");
const GADGETS: Resource = { group: "e2e.kobun.dev", version: "v1", plural: "kobungadgets", kind: "KobunGadget", namespaced: true, statusSubresource: true };
const CONFIGMAPS: Resource = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false };

// Only a control plane this suite started can be restarted (not one named by KOBUN_E2E_KUBECONFIG).
const targets = selectedTargets().filter((t) => t === "cluster" && !process.env.KOBUN_E2E_KUBECONFIG);

describe.each(targets)("the kube-apiserver restarts under a running operator (%s)", () => {
  test("changes made while it was down are each handled once after the relist, and the watches live on", async () => {
    const cluster = await startCluster({ timeoutMs: 120_000 });
    const scratch = mkdtempSync(join(tmpdir(), "kobun-e2e-restart-"));
    const client = await KubeClient.connect({ kubeconfig: cluster.kubeconfigPath, retries: 2 });
    const stop = new AbortController();
    let running: Promise<unknown> | undefined;
    try {
      await installCrds(client, join(root, "handlers/kobunexample.crd.yaml"));
      await installCrds(client, join(import.meta.dir, "handlers/kobungadget.crd.yaml"));
      const ns = await createNamespace(client, "e2e-restart");
      const example = (name: string, size: number): KubeObject => ({ apiVersion: "kobun.dev/v1", kind: "KobunExample", metadata: { name }, spec: { size } });
      const gadget = (name: string): KubeObject => ({ apiVersion: "e2e.kobun.dev/v1", kind: "KobunGadget", metadata: { name }, spec: {} });
      for (const name of ["keep", "change", "remove"]) await client.create(EXAMPLES, ns, example(name, 1));
      for (const name of ["g1", "g2"]) await client.create(GADGETS, ns, gadget(name));

      // What the handlers did, in order: "create keep", "update change", "delete remove", "reconcile g1", ...
      const calls: string[] = [];
      const registry = new Registry();
      registry.on.create("kobunexamples.kobun.dev/v1", ({ name }) => void calls.push(`create ${name}`), { id: "create" });
      registry.on.update("kobunexamples.kobun.dev/v1", ({ name }) => void calls.push(`update ${name}`), { id: "update" });
      registry.on.delete("kobunexamples.kobun.dev/v1", ({ name }) => void calls.push(`delete ${name}`), { id: "delete" });
      registry.on.reconcile("kobungadgets.e2e.kobun.dev/v1", async (ctx) => {
        calls.push(`reconcile ${ctx.name}`);
        const child = `${ctx.name}-child`;
        if (!ctx.cache.get("configmaps", child)) {
          await ctx.api.create(adopt({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: child }, data: {} }, { owner: ctx.body }));
        }
      }, { owns: ["configmaps"] });

      const settings = resolveSettings({ flags: { namespaces: [ns], standalone: true } });
      const operatorClient = await KubeClient.connect({ kubeconfig: cluster.kubeconfigPath });
      const sink = memorySink("info");
      running = run({ signal: stop.signal, settings, client: operatorClient, registry, logger: new Logger(sink) });
      running.catch(() => {});
      const count = (call: string) => calls.filter((c) => c === call).length;
      const settled = async (what: string, done: () => boolean) => eventually(what, () => done() || undefined, { timeoutMs: 90_000, intervalMs: 100 });
      await settled("the first handling", () => ["create keep", "create change", "create remove"].every((c) => count(c) === 1));
      const firstChildren = await eventually("both gadgets' children", async () => {
        const [c1, c2] = await Promise.all([getOrUndefined(client, CONFIGMAPS, ns, "g1-child"), getOrUndefined(client, CONFIGMAPS, ns, "g2-child")]);
        return c1 && c2 ? { g2: c2.metadata.uid } : undefined;
      }, { timeoutMs: 60_000 });

      // The operator's apiserver goes; another member of the control plane takes the changes.
      const spare = await cluster.spareApiServer();
      const spareConfig = join(scratch, "spare.kubeconfig");
      writeFileSync(spareConfig, readFileSync(cluster.kubeconfigPath, "utf8").replace(cluster.url, spare.url), { mode: 0o600 });
      const spareClient = await KubeClient.connect({ kubeconfig: spareConfig, retries: 2 });
      await cluster.stopApiServer();
      const before = calls.length;
      await spareClient.create(EXAMPLES, ns, example("born", 1));
      await spareClient.patch(EXAMPLES, ns, "change", { spec: { size: 2 } });
      await spareClient.delete(EXAMPLES, ns, "remove");
      await spareClient.delete(CONFIGMAPS, ns, "g2-child");
      await spareClient.create(GADGETS, ns, gadget("g3"));
      expect(calls.length).toBe(before); // nothing could reach the operator meanwhile
      // The first apiserver back (its watch cache begins at the present: the operator's versions are too old for it).
      await cluster.startApiServer();
      await spare.stop();
      spareClient.close();

      await settled("the changes made while the operator's apiserver was down", () =>
        count("create born") === 1 && count("update change") === 1 && count("delete remove") === 1 && count("reconcile g3") >= 1);
      await eventually("the removed example released and gone", async () => (await getOrUndefined(client, EXAMPLES, ns, "remove")) === undefined || undefined, { timeoutMs: 60_000 });
      const remade = await eventually("g2's child made again, g3's made", async () => {
        const [c2, c3] = await Promise.all([getOrUndefined(client, CONFIGMAPS, ns, "g2-child"), getOrUndefined(client, CONFIGMAPS, ns, "g3-child")]);
        return c2 && c3 ? c2 : undefined;
      }, { timeoutMs: 60_000 });
      expect(remade.metadata.uid).not.toBe(firstChildren.g2);

      // The watches are live: a change made now through the restarted apiserver arrives.
      await client.create(EXAMPLES, ns, example("after", 1));
      await settled("an example created after the restart", () => count("create after") === 1);
      // Each change once; nothing handled before ran again (a create of "keep" would be a handler run twice).
      for (const name of ["keep", "change", "remove", "born", "after"]) expect(count(`create ${name}`)).toBe(1);
      expect(count("update change")).toBe(1);
      expect(count("update keep")).toBe(0);
      expect(count("delete remove")).toBe(1);
      // The path this case is about was taken: the restarted apiserver had none of the operator's versions.
      expect(sink.lines.filter((l) => l.includes("(410 Gone); relisting")).length).toBeGreaterThanOrEqual(1);
      operatorClient.close();
    } finally {
      stop.abort();
      await running?.catch(() => undefined);
      client.close();
      await cluster.stop();
      rmSync(scratch, { recursive: true, force: true });
    }
  }, 300_000);
});
