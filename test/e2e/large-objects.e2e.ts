// Objects near the API server's size limits, and Secrets (issue 11, defect 3; nolar/kopf#1087):
// the compiled e2e binary (test/e2e/handlers/large.ts) against each target. The diff base must
// never carry a Secret's data, must stay small for large objects, and a bookkeeping write the
// server refuses as too large must be reported once, not retried by re-running the handlers.
//
//   cd test/e2e && KOBUN_E2E_TARGET=cluster bun test ./large-objects.e2e.ts

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { KubeObject, Resource } from "../../src/kube/types.ts";
import { createNamespace, eventually, EVENTS, uniqueName } from "./harness/kube.ts";
import { KOBUN_E2E, ROOT, startOperator, type Operator } from "./harness/operator.ts";
import { selectedTargets, type Target, type TargetName } from "./harness/target.ts";
import { targetSuite } from "./harness/suite.ts";

const E2E_CRDS = join(ROOT, "test/e2e/handlers/kobunflaky.crd.yaml");
const SECRETS: Resource = { group: "", version: "v1", plural: "secrets", kind: "Secret", namespaced: true, statusSubresource: false };
const LARGES: Resource = { group: "e2e.kobun.dev", version: "v1", plural: "kobunlarges", kind: "KobunLarge", namespaced: true, statusSubresource: true };
const LABELS = { "e2e.kobun.dev/large": "true" };
const BASE = "kobun.dev/last-handled-configuration";

const b64 = (bytes: number, fill = "s") => Buffer.from(fill.repeat(bytes)).toString("base64");

function secret(name: string, data: Record<string, string>, annotations?: Record<string, string>): KubeObject {
  return { apiVersion: "v1", kind: "Secret", metadata: { name, labels: LABELS, ...(annotations ? { annotations } : {}) }, data };
}

/** Everything kobun may have written onto the object: its annotations and status. */
function bookkeeping(obj: KubeObject): string {
  return JSON.stringify({ annotations: obj.metadata.annotations ?? {}, status: obj.status ?? {} });
}

function lastHandled(obj: KubeObject): string | undefined {
  return obj.metadata.annotations?.[BASE] ?? obj.status?.kobun?.lastHandledConfiguration;
}

/** Log lines of one handler's runs on one object (the handlers log one line per run). */
function runs(op: Operator, what: string, name: string): string[] {
  return op.lines.filter((l) => l.includes(`${what} ran on ${name}`));
}

for (const targetName of selectedTargets() as TargetName[]) {
  describe(`large objects [${targetName}]`, () => {
    const suite = targetSuite(targetName, { crds: [E2E_CRDS], cleanup: [LARGES] });
    let setupError: unknown;
    let ns = "";
    let op: Operator | undefined;
    const need = (): { t: Target; op: Operator } => {
      const t = suite();
      if (!op) throw new Error(`e2e operator in ${t.describe} did not start: ${setupError instanceof Error ? setupError.message : String(setupError)}`);
      return { t, op };
    };
    const handled = async (t: Target, r: Resource, name: string, o: Operator, timeoutMs = 20_000) =>
      eventually(`${r.plural}/${name} handled (its diff base written)`, async () => {
        const obj = await t.client.get(r, ns, name);
        return lastHandled(obj) !== undefined ? obj : undefined;
      }, { timeoutMs }).catch((e) => { throw new Error(`${e.message}\n${o.tail()}`); });

    beforeAll(async () => {
      try {
        const target = suite();
        ns = await createNamespace(target.client);
        op = startOperator("large", target.kubeconfigPath, ["--standalone", "-n", ns], KOBUN_E2E);
      } catch (e) {
        setupError = e;
      }
    }, 120_000);

    afterAll(async () => {
      await op?.stop().catch(() => {});
    }, 30_000);

    test("a 200 KB Secret is handled once; no Secret data in its annotations; a change reaches the update handler via the digest", async () => {
      const { t, op } = need();
      const name = uniqueName("secret");
      const first = b64(200 * 1024, "a");
      await t.client.create(SECRETS, ns, secret(name, { key: first }));
      const obj = await handled(t, SECRETS, name, op);
      expect(bookkeeping(obj)).not.toContain(first.slice(0, 64));
      expect(lastHandled(obj)!.length).toBeLessThan(1000);
      expect(runs(op, "large_secret_create", name)).toHaveLength(1);
      expect(op.lines.filter((l) => l.includes(name) && /could not process|will retry/.test(l))).toEqual([]);

      const second = b64(200 * 1024, "b");
      await t.client.patch(SECRETS, ns, name, { data: { key: second } });
      await op.waitForLog(new RegExp(`large_secret_update ran on ${name} diff=change:data:sensitive`), 20_000);
      const after = await eventually("the new diff base", async () => {
        const o = await t.client.get(SECRETS, ns, name);
        return lastHandled(o) !== lastHandled(obj) ? o : undefined;
      });
      expect(bookkeeping(after)).not.toContain(second.slice(0, 64));
      expect(runs(op, "large_secret_create", name)).toHaveLength(1);
    }, 60_000);

    test("the largest Secret the server takes (1 MiB of data) is handled once, its data kept out of the annotations", async () => {
      const { t, op } = need();
      const name = uniqueName("secret-max");
      const data = b64(1024 * 1024, "m"); // MaxSecretSize: the values' bytes, decoded
      await t.client.create(SECRETS, ns, secret(name, { max: data }));
      const obj = await handled(t, SECRETS, name, op);
      expect(bookkeeping(obj)).not.toContain(data.slice(0, 64));
      expect(runs(op, "large_secret_create", name)).toHaveLength(1);
    }, 60_000);

    test("a 900 KB custom resource (status subresource) is handled once; its diff base is a digest", async () => {
      const { t, op } = need();
      const name = uniqueName("large");
      await t.client.create(LARGES, ns, { apiVersion: "e2e.kobun.dev/v1", kind: "KobunLarge", metadata: { name }, spec: { blob: "x".repeat(900 * 1024) } });
      const obj = await handled(t, LARGES, name, op);
      expect(obj.status?.large_object_create?.bytes).toBeGreaterThan(900 * 1024);
      expect(lastHandled(obj)!).toMatch(/^"kobun\.dev\/sha256:[0-9a-f]{64}"$/);
      expect(runs(op, "large_object_create", name)).toHaveLength(1);
    }, 60_000);

    test("a bookkeeping write refused as too large (annotations full): one Warning event, one log line, the handler not re-run", async () => {
      const { t, op } = need();
      const name = uniqueName("crowded");
      // The user's own annotations leave no room: kobun's diff base annotation is refused (422 Too long).
      await t.client.create(SECRETS, ns, secret(name, { key: b64(16) }, { notes: "n".repeat(256 * 1024 - 60) }));
      const event = await eventually("a TooLarge Warning event", async () => {
        const list = await t.client.list(EVENTS, { namespace: ns });
        return list.items.find((e: any) => e.involvedObject?.name === name && e.reason === "TooLarge");
      }, { timeoutMs: 20_000 }).catch((e) => { throw new Error(`${e.message}\n${op.tail()}`); });
      expect((event as any).type).toBe("Warning");
      expect((event as any).message).toContain("metadata.annotations: Too long: may not be more than 262144 bytes");
      const refusals = () => op.lines.filter((l) => l.includes(name) && l.includes("refused the handlers' results"));
      await eventually("the refusal's log line", () => refusals().length > 0);
      // A retry would come 1 s after the refusal (the processor's first backoff): wait past it, bounded, to see none.
      await Bun.sleep(2000);
      expect(runs(op, "large_secret_create", name)).toHaveLength(1);
      expect(refusals()).toHaveLength(1);
      const events = (await t.client.list(EVENTS, { namespace: ns })).items.filter((e: any) => e.involvedObject?.name === name && e.reason === "TooLarge");
      expect(events).toHaveLength(1);
      expect((events[0] as any).count ?? 1).toBe(1);
    }, 60_000);
  });
}
