// LIST: label/field selectors, paging with limit/continue, continue expiry after compaction.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startSandbox, type Sandbox } from "../src/index.ts";
import { api, cm, CM } from "./helpers.ts";

let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox();
  await api(sb, "POST", "/api/v1/namespaces", { metadata: { name: "other" } });
  await api(sb, "POST", CM, cm("a", { app: "web", tier: "front" }));
  await api(sb, "POST", CM, cm("b", { app: "web", tier: "back" }));
  await api(sb, "POST", CM, cm("c", { app: "db" }));
  await api(sb, "POST", CM, cm("d", {}));
  await api(sb, "POST", "/api/v1/namespaces/other/configmaps", cm("e", { app: "web" }));
});
afterAll(async () => { await sb.stop(); });

const names = async (q: string, path = CM): Promise<string[] | number> => {
  const r = await api(sb, "GET", `${path}?${q}`);
  return r.status === 200 ? r.body.items.map((i: any) => i.metadata.name) : r.status;
};

describe("list", () => {
  test("shape: kind, apiVersion, metadata.resourceVersion, items of a built-in kind without kind/apiVersion (as kube-apiserver), stable order", async () => {
    const r = await api(sb, "GET", CM);
    expect(r.body.kind).toBe("ConfigMapList");
    expect(r.body.apiVersion).toBe("v1");
    expect(r.body.metadata.resourceVersion).toBe(sb.store.resourceVersion());
    expect(r.body.items.map((i: any) => i.metadata.name)).toEqual(["a", "b", "c", "d"]);
    expect(r.body.items[0].kind).toBeUndefined();
    expect(r.body.items[0].apiVersion).toBeUndefined();
    const all = await api(sb, "GET", "/api/v1/configmaps");
    expect(all.body.items.map((i: any) => `${i.metadata.namespace}/${i.metadata.name}`)).toEqual(["default/a", "default/b", "default/c", "default/d", "other/e"]);
  });

  test("label selectors", async () => {
    expect(await names("labelSelector=" + encodeURIComponent("app=web"))).toEqual(["a", "b"]);
    expect(await names("labelSelector=" + encodeURIComponent("app==web"))).toEqual(["a", "b"]);
    expect(await names("labelSelector=" + encodeURIComponent("app!=web"))).toEqual(["c", "d"]);
    expect(await names("labelSelector=" + encodeURIComponent("app in (web, db)"))).toEqual(["a", "b", "c"]);
    expect(await names("labelSelector=" + encodeURIComponent("app notin (web)"))).toEqual(["c", "d"]);
    expect(await names("labelSelector=" + encodeURIComponent("tier"))).toEqual(["a", "b"]);
    expect(await names("labelSelector=" + encodeURIComponent("!tier"))).toEqual(["c", "d"]);
    expect(await names("labelSelector=" + encodeURIComponent("app=web,tier=back"))).toEqual(["b"]);
    expect(await names("labelSelector=" + encodeURIComponent("app in (web),!tier"))).toEqual([]);
    expect(await names("labelSelector=" + encodeURIComponent("a b c"))).toBe(400);
  });

  test("field selectors", async () => {
    expect(await names("fieldSelector=" + encodeURIComponent("metadata.name=c"))).toEqual(["c"]);
    expect(await names("fieldSelector=" + encodeURIComponent("metadata.name==c"))).toEqual(["c"]);
    expect(await names("fieldSelector=" + encodeURIComponent("metadata.name!=c"))).toEqual(["a", "b", "d"]);
    expect(await names("fieldSelector=" + encodeURIComponent("metadata.namespace=other"), "/api/v1/configmaps")).toEqual(["e"]);
    expect(await names("fieldSelector=" + encodeURIComponent("spec.foo=bar"))).toBe(400);
  });

  test("paging: limit + continue + remainingItemCount", async () => {
    const p1 = await api(sb, "GET", `${CM}?limit=3`);
    expect(p1.body.items.map((i: any) => i.metadata.name)).toEqual(["a", "b", "c"]);
    expect(p1.body.metadata.remainingItemCount).toBe(1);
    expect(typeof p1.body.metadata.continue).toBe("string");
    const p2 = await api(sb, "GET", `${CM}?limit=3&continue=${encodeURIComponent(p1.body.metadata.continue)}`);
    expect(p2.body.items.map((i: any) => i.metadata.name)).toEqual(["d"]);
    expect(p2.body.metadata.continue).toBeUndefined();
    expect(p2.body.metadata.resourceVersion).toBe(p1.body.metadata.resourceVersion);
    const s1 = await api(sb, "GET", `${CM}?limit=1&labelSelector=app%3Dweb`);
    expect(s1.body.items.map((i: any) => i.metadata.name)).toEqual(["a"]);
    const s2 = await api(sb, "GET", `${CM}?limit=1&labelSelector=app%3Dweb&continue=${encodeURIComponent(s1.body.metadata.continue)}`);
    expect(s2.body.items.map((i: any) => i.metadata.name)).toEqual(["b"]);
    expect(s2.body.metadata.continue).toBeUndefined();
    expect((await api(sb, "GET", `${CM}?limit=1&continue=garbage`)).status).toBe(400);
  });

  test("continue token older than compacted history → 410 Expired", async () => {
    const p1 = await api(sb, "GET", `${CM}?limit=2`);
    sb.faults.compact();
    const p2 = await api(sb, "GET", `${CM}?limit=2&continue=${encodeURIComponent(p1.body.metadata.continue)}`);
    expect(p2.status).toBe(410);
    expect(p2.body).toMatchObject({ kind: "Status", reason: "Expired", code: 410 });
    expect(p2.body.message).toContain("The provided continue parameter is too old");
  });
});
