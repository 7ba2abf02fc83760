// A Secret's stringData (secret-data.ts): what the store holds after each kind of write, the
// 1 MiB data limit counting it, the table's Data column. The real server's answers to the same
// writes are test/e2e/secret-string-data.e2e.ts; these look at what only the sandbox shows.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startSandbox, type Sandbox } from "../src/index.ts";
import { api } from "./helpers.ts";

const SECRETS = "/api/v1/namespaces/default/secrets";
const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");
const stored = (name: string) => sb.store.get("", "secrets", "default", name);

let sb: Sandbox;
beforeAll(async () => { sb = await startSandbox(); });
afterAll(async () => { await sb.stop(); });

describe("Secret stringData", () => {
  test("the store holds data only, after create, PUT, each patch type and apply", async () => {
    expect((await api(sb, "POST", SECRETS, { metadata: { name: "s" }, data: { a: b64("old") }, stringData: { a: "new" } })).status)
      .toBe(201);
    expect(stored("s")).toMatchObject({ data: { a: b64("new") } });
    const writes: [string, string, unknown, string?][] = [
      ["PUT", "/s", { metadata: { name: "s" }, data: { a: b64("new") }, stringData: { p: "put" } }],
      ["PATCH", "/s", { stringData: { m: "merge" } }, "application/merge-patch+json"],
      ["PATCH", "/s", { stringData: { g: "strategic" } }, "application/strategic-merge-patch+json"],
      ["PATCH", "/s", [{ op: "add", path: "/stringData", value: { j: "json" } }], "application/json-patch+json"],
      ["PATCH", "/s?fieldManager=t", { apiVersion: "v1", kind: "Secret", metadata: { name: "s" }, stringData: { y: "apply" } },
        "application/apply-patch+yaml"],
    ];
    for (const [method, path, body, type] of writes) {
      const answer = await api(sb, method, `${SECRETS}${path}`, body, type);
      expect([method, path, answer.status, answer.body.stringData]).toEqual([method, path, 200, undefined]);
      expect(stored("s")?.stringData).toBeUndefined();
    }
    const data = { a: b64("new"), p: b64("put"), m: b64("merge"), g: b64("strategic"), j: b64("json"), y: b64("apply") };
    expect(stored("s")?.data).toEqual(data);
    // a dry-run apply answers the merge and stores nothing
    const dry = await api(sb, "PATCH", `${SECRETS}/s?fieldManager=t&dryRun=All`,
      { apiVersion: "v1", kind: "Secret", metadata: { name: "s" }, stringData: { y: "apply", d: "dry" } }, "application/apply-patch+yaml");
    expect([dry.status, dry.body.data.d, dry.body.stringData]).toEqual([200, b64("dry"), undefined]);
    expect(stored("s")?.data).toEqual(data);
  });

  test("stringData counts in the 1 MiB of a Secret's data, with data's own values", async () => {
    const half = "x".repeat(600_000);
    const refused = await api(sb, "POST", SECRETS, { metadata: { name: "big" }, data: { a: b64(half) }, stringData: { b: half } });
    expect([refused.status, refused.body.message]).toEqual([422, 'Secret "big" is invalid: data: Too long: may not be more than 1048576 bytes']);
    expect(stored("big")).toBeUndefined();
  });

  test("the table's Data column counts the merged keys; a refused value leaves the stored Secret as it was", async () => {
    await api(sb, "POST", SECRETS, { metadata: { name: "t" }, data: { a: b64("1") }, stringData: { a: "2", b: "3" } });
    const refused = await api(sb, "PATCH", `${SECRETS}/t`, { stringData: { c: 4 } }, "application/merge-patch+json");
    expect([refused.status, refused.body.reason]).toEqual([422, "Invalid"]);
    const table = await fetch(`${sb.url}${SECRETS}/t`, { headers: { accept: "application/json;as=Table;v=v1;g=meta.k8s.io" } });
    const rows = ((await table.json()) as any).rows.map((r: any) => r.cells.slice(0, 3));
    expect(rows).toEqual([["t", "Opaque", 2]]);
    expect(stored("t")?.data).toEqual({ a: b64("2"), b: b64("3") });
  });
});
