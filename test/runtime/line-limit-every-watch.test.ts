// Issue 11, defect 10c: watching.lineLimit caps a watch line on every stream the operator
// opens, not only those of the handled resources: the namespace watch of a glob, the peering
// object's watch, and the Lease's watch read the same server (or proxy) and would otherwise
// hold a longer line than the limit the user chose.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/index.ts";
import { run } from "../../src/runtime/operator.ts";
import { env, testLogger, type Env } from "../peering/helpers.ts";
import { eventually } from "./helpers.ts";

const MiB = 1024 * 1024;
let e: Env;
beforeAll(async () => {
  e = await env();
  await post("/api/v1/namespaces", { metadata: { name: "g-1" } });
});
afterAll(() => e.stop());

async function post(path: string, body: unknown): Promise<void> {
  const response = await fetch(`${e.sandbox.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  expect(response.status).toBe(201);
}

const cases: { what: string; flags: Record<string, unknown>; file: Record<string, any>; failed: RegExp }[] = [
  { what: "the namespace watch of a glob", flags: { namespaces: ["g-*"], standalone: true }, file: {}, failed: /watching namespaces failed/ },
  { what: "a namespace's peering watch", flags: { namespaces: ["g-1"] }, file: {}, failed: /watching the peering object failed/ },
  { what: "the cluster-wide peering watch", flags: { namespaces: ["g-1"] }, file: { watching: { clusterWideAbove: 0 } }, failed: /watching the peering object failed/ },
  { what: "the Lease's watch", flags: { namespaces: ["g-1"] }, file: { peering: { mode: "lease", name: "line-limit" } }, failed: /watching the lease failed/ },
];

for (const [i, { what, flags, file, failed }] of cases.entries()) {
  test(`a line longer than watching.lineLimit on ${what} is dropped as too long, not read`, async () => {
    const registry = new Registry();
    const name = `cm-${i}`;
    let handled!: () => void;
    const handledOnce = new Promise<void>((resolve) => (handled = resolve));
    registry.on.create("v1/configmaps", ({ name: object }) => void (object === name && handled()), { id: "seen" });
    const { logger, lines } = testLogger();
    const stop = new AbortController();
    const operator = run({
      signal: stop.signal, client: e.client, registry, logger,
      settings: resolveSettings({ fileData: { ...file, watching: { ...file.watching, lineLimit: MiB } }, flags }),
    });
    try {
      // Handled: the operator's watches (and whatever it serves by) are open and listed.
      await post("/api/v1/namespaces/g-1/configmaps", { metadata: { name } });
      await handledOnce;
      await eventually(() => e.sandbox.stats.openWatches() >= 2, "the operator's watches to be open");
      e.sandbox.faults.sendMalformedLine("x".repeat(2 * MiB));
      await eventually(() => lines.some((l) => failed.test(l) && l.includes(`${MiB} bytes`)), `${what} to drop the line as too long`);
      expect(lines.filter((l) => l.includes("malformed line"))).toEqual([]);
    } finally {
      stop.abort();
      await operator;
    }
  }, 20_000);
}
