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

  test("continue token older than compacted history → 410 Expired, with a token that goes on at the latest", async () => {
    const p1 = await api(sb, "GET", `${CM}?limit=2`);
    sb.faults.compact();
    const p2 = await api(sb, "GET", `${CM}?limit=2&continue=${encodeURIComponent(p1.body.metadata.continue)}`);
    expect(p2.status).toBe(410);
    expect(p2.body).toMatchObject({ kind: "Status", reason: "Expired", code: 410 });
    // the etcd store's words (handleCompactedErrorForPaging), and its token of resourceVersion -1
    expect(p2.body.message).toStartWith("The provided continue parameter is too old to display a consistent list "
      + "result. You can start a new list without the continue parameter, or use the continue token in this response");
    const token = JSON.parse(Buffer.from(p2.body.metadata.continue, "base64url").toString());
    expect(token).toMatchObject({ v: "meta.k8s.io/v1", rv: -1 });
    await api(sb, "POST", CM, cm("later", {}));
    const p3 = await api(sb, "GET", `${CM}?limit=5&continue=${encodeURIComponent(p2.body.metadata.continue)}`);
    expect([p3.status, p3.body.items.map((i: any) => i.metadata.name)]).toEqual([200, ["c", "d", "later"]]);
    expect(p3.body.metadata.resourceVersion).toBe(sb.store.resourceVersion());
    await api(sb, "DELETE", `${CM}/later`);
  });

  test("later pages are the first page's snapshot, beyond the watchable history (a watch from there is 410)", async () => {
    const small = await startSandbox({ historySize: 3 });
    try {
      const at = "/api/v1/namespaces/default/configmaps";
      for (const n of ["a", "b", "c"]) await api(small, "POST", at, cm(n, {}));
      const p1 = await api(small, "GET", `${at}?limit=1`);
      for (let i = 0; i < 5; i++) await api(small, "PATCH", `${at}/b`, { data: { i: String(i) } }, "application/merge-patch+json");
      await api(small, "DELETE", `${at}/c`);
      await api(small, "POST", at, cm("bb", {}));
      const p2 = await api(small, "GET", `${at}?limit=5&continue=${encodeURIComponent(p1.body.metadata.continue)}`);
      expect(p2.body.items.map((i: any) => [i.metadata.name, i.data])).toEqual([["b", { k: "v" }], ["c", { k: "v" }]]);
      expect(p2.body.metadata.resourceVersion).toBe(p1.body.metadata.resourceVersion);
      const from = `${at}?watch=1&resourceVersion=${p1.body.metadata.resourceVersion}`;
      const watch = await fetch(small.url + from, { signal: AbortSignal.timeout(5_000) });
      expect(JSON.parse((await watch.text()).trim()).object.code).toBe(410);
    } finally {
      await small.stop();
    }
  });
});
