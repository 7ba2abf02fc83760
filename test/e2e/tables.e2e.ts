// kubectl's tables (item 10 of issue 35): for a sample object of every built-in kind the
// sandbox serves, the Table a GET answers (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`)
// has kube-apiserver's columns (name, type, format, priority) and cells. expected/tables.json is
// what the real server answered (regenerate: KOBUN_E2E_WRITE_TABLES=1 on the cluster target);
// cells that depend on the clock or on allocation (ages, durations, timestamps, cluster IPs,
// uids) are compared in form.
//
//   cd test/e2e && KOBUN_E2E_TARGET=cluster bun test ./tables.e2e.ts

import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { KubeClient } from "../../src/kube/client.ts";
import { CRDS, createNamespace, eventually, rawRequest, uniqueName } from "./harness/kube.ts";
import { ROOT } from "./harness/operator.ts";
import { targetSuite } from "./harness/suite.ts";
import { tableSamples, type TableSample } from "./harness/table-samples.ts";
import { selectedTargets, startTarget, type TargetName } from "./harness/target.ts";

const EXPECTED = join(ROOT, "test/e2e/expected/tables.json");
const TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
const TIMED = new Set(["Age", "Duration", "Last Seen", "First Seen", "Last Schedule"]);

interface Column { name: string; type: string; format: string; priority: number }
type Shown = { columns: string[]; cells: unknown[] };

async function get(client: KubeClient, path: string, accept = "application/json"): Promise<any> {
  const headers = { ...(await client.connection.authHeaders()), accept };
  const tls = client.connection.tls;
  const response = await fetch(`${client.server}${path}`, { headers, ...(tls ? { tls } : {}) } as RequestInit);
  if (response.status !== 200) throw new Error(`GET ${path}: ${response.status} ${await response.text()}`);
  return response.json();
}

/** a cell in the form the comparison needs: what the clock or an allocator chose is replaced by its shape */
function form(column: Column, cell: unknown, names: [string, string][]): unknown {
  if (typeof cell !== "string") return cell;
  if (TIMED.has(column.name) && /^\d+[smhdy](\d+[smh])?$/.test(cell)) return "<duration>";
  if (column.type === "date" && !Number.isNaN(Date.parse(cell))) return "<timestamp>";
  if (column.name === "Cluster-IP" && /^\d+\.\d+\.\d+\.\d+$/.test(cell)) return "<ip>";
  let out = cell.replace(/\b(\d+[smhdy])+ ago\b/g, "<duration> ago").replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<uid>");
  for (const [actual, placeholder] of names) out = out.split(actual).join(placeholder);
  return out;
}

async function shownTable(client: KubeClient, path: string, names: [string, string][]): Promise<Shown> {
  const table = await get(client, path, TABLE);
  const columns: Column[] = table.columnDefinitions;
  expect(table.rows.length).toBe(1);
  return {
    columns: columns.map((c) => `${c.name}|${c.type}|${c.format}|${c.priority}`),
    cells: (table.rows[0].cells as unknown[]).map((cell, i) => form(columns[i]!, cell, names)),
  };
}

async function create(client: KubeClient, sample: TableSample, ns: string): Promise<string> {
  const collection = `${sample.api}${sample.namespaced ? `/namespaces/${ns}` : ""}/${sample.plural}`;
  const created = await rawRequest(client, "POST", collection, sample.body);
  const body = (await created.json()) as any;
  if (created.status !== 201) throw new Error(`create ${sample.plural}: ${created.status} ${body.message}`);
  const path = `${collection}/${body.metadata.name}`;
  if (sample.status) {
    const updated = await rawRequest(client, "PUT", `${path}/status`, { ...body, status: sample.status });
    if (updated.status !== 200) throw new Error(`status of ${sample.plural}: ${updated.status} ${((await updated.json()) as any).message}`);
  }
  return path;
}

describe.each(selectedTargets())("the built-in kinds' tables against %s", (targetName: TargetName) => {
  const need = targetSuite(targetName, { crds: [], cleanup: [] });

  test("each kind's columns and cells are kube-apiserver's", async () => {
    const { client } = need();
    const ns = await createNamespace(client, "e2e-tables");
    const suffix = uniqueName("t").slice(2);
    const samples = tableSamples(ns, suffix);
    const names: [string, string][] = [[ns, "NS"], [suffix, "SUFFIX"]];
    const shown: Record<string, Shown> = {};
    const clusterScoped: string[] = [];
    try {
      for (const sample of samples) {
        const path = await create(client, sample, ns);
        if (!sample.namespaced) clusterScoped.push(path);
        if (sample.plural === "customresourcedefinitions") {
          await eventually("the CRD established", async () =>
            ((await get(client, path)).status?.conditions ?? []).some((c: any) => c.type === "Established" && c.status === "True") || undefined, { timeoutMs: 30_000 });
        }
        shown[`${sample.api}/${sample.plural}${sample.variant ? `#${sample.variant}` : ""}`] = await shownTable(client, path, names);
      }
    } finally {
      for (const path of clusterScoped) await rawRequest(client, "DELETE", path, {}).catch(() => undefined);
    }
    if (process.env.KOBUN_E2E_WRITE_TABLES && targetName === "cluster") await Bun.write(EXPECTED, `${JSON.stringify(shown, null, 1)}\n`);
    expect(shown).toEqual(await Bun.file(EXPECTED).json());
  }, 60_000);
});

describe("the samples", () => {
  test("cover every kind the sandbox stores (its discovery)", async () => {
    const { client, stop } = await startTarget("sandbox");
    try {
      const sampled = new Set(tableSamples("ns", "x").map((s) => `${s.api}/${s.plural}`));
      const served: string[] = [];
      const groups = await get(client, "/apis");
      const versions = ["/api/v1", ...groups.groups.map((g: any) => `/apis/${g.preferredVersion.groupVersion}`)];
      for (const version of versions) {
        for (const r of (await get(client, version)).resources) {
          if (!r.name.includes("/") && r.verbs.includes("list")) served.push(`${version}/${r.name}`);
        }
      }
      expect(served.length).toBeGreaterThan(20);
      expect(served.filter((key) => !sampled.has(key))).toEqual([]);
    } finally {
      await stop();
    }
  }, 30_000);
});
