// The compiled operator hands its start-up's code pages back to the kernel (runtime/code-pages.ts,
// `memory.trimCodePages`): once ready, its resident file pages are well below those of the same
// binary with the setting off. Each runs from a copy of its own: the kernel reclaims only pages no
// other process maps, and other tests run dist/kobun at the same time.
//
//   cd test/e2e && KOBUN_E2E_TARGET=sandbox bun test ./code-pages.e2e.ts

import { describe, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createNamespace, EXAMPLES } from "./harness/kube.ts";
import { KOBUN, ROOT, startOperator, type Operator } from "./harness/operator.ts";
import { selectedTargets, type TargetName } from "./harness/target.ts";
import { targetSuite } from "./harness/suite.ts";

const EXAMPLE_CRD = join(ROOT, "handlers/kobunexample.crd.yaml");
const rssFileMiB = async (pid: number) => {
  const status = await Bun.file(`/proc/${pid}/status`).text();
  return Number(status.match(/RssFile:\s+(\d+)/)![1]) / 1024;
};

/** Runs `body` with a work directory and a list of operators it starts; both are gone after, however it ends. */
async function withWork(prefix: string, body: (work: string, ops: Operator[]) => Promise<void>): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), prefix));
  const ops: Operator[] = [];
  try {
    await body(work, ops);
  } finally {
    for (const op of ops) await op.stop().catch(() => {});
    rmSync(work, { recursive: true, force: true });
  }
}

describe.each(selectedTargets())("code pages [%s]", (targetName: TargetName) => {
  const need = targetSuite(targetName, { crds: [EXAMPLE_CRD], cleanup: [EXAMPLES] });

  test.skipIf(process.platform !== "linux")("once ready, a compiled operator keeps far fewer of its code pages resident than with memory.trimCodePages off", async () => {
    const t = need();
    await withWork("kobun-e2e-code-pages-", async (work, ops) => {
      writeFileSync(join(work, "off.yaml"), "memory:\n  trimCodePages: false\n");
      const start = async (label: string, config: string[]) => {
        const binary = join(work, label);
        copyFileSync(KOBUN, binary);
        const ns = await createNamespace(t.client, `pages-${label}`);
        const op = startOperator(label, t.kubeconfigPath, ["--standalone", "-n", ns, ...config], binary);
        ops.push(op);
        await op.waitForLog(/operator ready/, 30_000);
        return op;
      };
      const trimmed = await start("trimmed", []);
      // The start-up's trim runs beside the watches' start (bun:ffi is loaded for it then): it may end after ready.
      await trimmed.waitForLog(/code pages handed back to the kernel/, 15_000);
      const kept = await start("kept", ["--config", join(work, "off.yaml")]);
      const [trimmedMiB, keptMiB] = [await rssFileMiB(trimmed.pid), await rssFileMiB(kept.pid)];
      // Measured when ready: 20 against 41–43 MB of file pages. The bound leaves room for what a loaded run pages back in.
      expect(trimmedMiB).toBeLessThan(keptMiB - 10);
      expect(kept.logged(/code pages/)).toBe(false);
    });
  }, 90_000);

  test.skipIf(process.platform !== "linux")("the first sync is lean until the operator goes quiet after every watch listed; memory.leanStartup: false leaves it out", async () => {
    const t = need();
    await withWork("kobun-e2e-lean-", async (work, ops) => {
      writeFileSync(join(work, "off.yaml"), "memory:\n  leanStartup: false\n");
      const ns = await createNamespace(t.client, "lean");
      // Objects that exist before the operator starts: its first sync handles each once.
      for (let i = 0; i < 5; i++) {
        await t.client.create(EXAMPLES, ns, { apiVersion: "kobun.dev/v1", kind: "KobunExample", metadata: { name: `lean-${i}` }, spec: { content: "x" } });
      }
      const lean = startOperator("lean", t.kubeconfigPath, ["--standalone", "-n", ns], KOBUN);
      ops.push(lean);
      const over = await lean.waitForLog(/start-up over/, 60_000);
      expect(over).toMatch(/ why="?synced/);
      const ready = lean.lines.findIndex((l) => /operator ready/.test(l));
      expect(ready).toBeGreaterThanOrEqual(0);
      expect(ready).toBeLessThan(lean.lines.indexOf(over)); // a LIST's wait is quiet too: never over before ready
      await lean.stop(); // one operator at a time on these objects
      const off = startOperator("lean-off", t.kubeconfigPath, ["--standalone", "-n", ns, "--config", join(work, "off.yaml")], KOBUN);
      ops.push(off);
      await off.waitForLog(/operator ready/, 30_000);
      await off.waitForLog(/code pages handed back to the kernel/, 15_000); // the start-up's trim: lean would end about then
      expect(off.logged(/start-up over/)).toBe(false);
    });
  }, 120_000);
});
