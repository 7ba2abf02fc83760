// ctx.api with typed tokens (issue 35, item 5): `resource.configmaps` names a namespaced kind, so
// its paths carry the handled object's namespace (or the one asked for) and a list stays in it;
// `resource.namespaces` names a cluster-scoped kind, whose paths carry none. Before, a token was
// taken for a resolved resource: a GET of /api/v1/configmaps/NAME (404) and a list of every namespace.
// Against the sandbox, with the API bound as the runtime binds it to a handler's object.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { resource } from "../../src/declaring/index.ts";
import type { Api } from "../../src/declaring/index.ts";
import { ApiClient } from "../../src/handling/api.ts";
import { KubeClient } from "../../src/kube/client.ts";
import type { KubeObject, Resource } from "../../src/kube/types.ts";
import { Watcher } from "../../src/watching/watcher.ts";

let sandbox: Sandbox;
let client: KubeClient;
let configmaps: Resource;
let namespaces: Resource;
const handlerStop = new AbortController();

beforeAll(async () => {
  sandbox = await startSandbox();
  client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  configmaps = await client.resolve("v1/configmaps");
  namespaces = await client.resolve("v1/namespaces");
  for (const name of ["team-a", "team-b"]) {
    await client.create(namespaces, null, { apiVersion: "v1", kind: "Namespace", metadata: { name } });
  }
});

afterAll(async () => {
  handlerStop.abort();
  client.close();
  await sandbox.stop();
});

/** ctx.api as a handler of the ConfigMap `parent` in `namespace` gets it. */
async function apiOfHandlerIn(namespace: string): Promise<Api> {
  const parent = await client.create(configmaps, namespace, {
    apiVersion: "v1", kind: "ConfigMap", metadata: { name: `parent-${crypto.randomUUID().slice(0, 8)}`, namespace },
  });
  const api = new ApiClient({
    client, fieldManager: "kobun-test",
    watch: (resource, o, signal) => new Watcher(client, resource, { ...o, streamingList: "never" }).events(signal),
  });
  return api.bind({ resource: configmaps, body: parent }, handlerStop.signal);
}

function pathsSince(at: number, method: string): string[] {
  return sandbox.stats.log.slice(at).filter((r) => r.method === method).map((r) => r.path);
}

test("a namespaced token defaults to the handled object's namespace: get, list, patch and delete stay in it", async () => {
  const api = await apiOfHandlerIn("team-a");
  await client.create(configmaps, "team-b", {
    apiVersion: "v1", kind: "ConfigMap", metadata: { name: "child", namespace: "team-b" }, data: { team: "b" },
  });
  const from = sandbox.stats.log.length;
  await api.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "child" }, data: { team: "a" } });

  const child = await api.get(resource.configmaps, "child");
  expect(child.metadata.namespace).toBe("team-a");
  expect(child.data).toEqual({ team: "a" });
  expect(pathsSince(from, "GET")).toContain("/api/v1/namespaces/team-a/configmaps/child");

  const listed = await api.list(resource.configmaps);
  expect(new Set(listed.map((c) => c.metadata.namespace))).toEqual(new Set(["team-a"]));
  expect(listed.map((c) => c.metadata.name)).toContain("child");
  const everywhere = await api.list(resource.configmaps, { namespace: null });
  expect(everywhere.filter((c) => c.metadata.name === "child").map((c) => c.metadata.namespace).sort())
    .toEqual(["team-a", "team-b"]);
  const other = await api.get(resource.configmaps, "child", { namespace: "team-b" });
  expect(other.data).toEqual({ team: "b" });

  const patched = await api.patch(resource.configmaps, "child", { data: { patched: "yes" } });
  expect(patched.data).toEqual({ team: "a", patched: "yes" });
  await api.delete(resource.configmaps, "child");
  expect(sandbox.store.get("", "configmaps", "team-a", "child")).toBeUndefined();
  expect(sandbox.store.get("", "configmaps", "team-b", "child")?.data).toEqual({ team: "b" }); // the other's untouched
});

test("a cluster-scoped token's paths carry no namespace, even from a handler of a namespaced object", async () => {
  const api = await apiOfHandlerIn("team-a");
  const from = sandbox.stats.log.length;
  const team = await api.get(resource.namespaces, "team-b");
  expect(team.metadata.name).toBe("team-b");
  expect(team.status?.phase).toBe("Active");
  const all = (await api.list(resource.namespaces)).map((n) => n.metadata.name);
  expect(all).toEqual(expect.arrayContaining(["default", "team-a", "team-b"]));
  const labelled = await api.patch(resource.namespaces, "team-b", { metadata: { labels: { tier: "gold" } } });
  expect(labelled.metadata.labels?.tier).toBe("gold");
  expect(pathsSince(from, "GET")).toEqual(["/api/v1/namespaces/team-b", "/api/v1/namespaces"]);
  expect(pathsSince(from, "PATCH")).toEqual(["/api/v1/namespaces/team-b"]);
});

test("a token written with a kind or short name resolves like the selector it is", async () => {
  const api = await apiOfHandlerIn("team-b");
  const byShortName = resource<KubeObject>("cm");
  const answer = await api.list(byShortName);
  expect(answer.every((c) => c.metadata.namespace === "team-b")).toBe(true);
  expect(answer.length).toBeGreaterThan(0);
});

test("watch(token) lists and watches the handled object's namespace only", async () => {
  const api = await apiOfHandlerIn("team-b");
  const seen: string[] = [];
  for await (const event of api.watch(resource.configmaps)) {
    if (event.type === "relist-done") {
      await client.create(configmaps, "team-a", { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "elsewhere" } });
      await client.create(configmaps, "team-b", { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "here" } });
    } else if (event.type !== "relist-start") {
      seen.push(`${event.object.metadata.namespace}/${event.object.metadata.name}`);
      if (event.object.metadata.name === "here") break; // created after "elsewhere": that one had its chance
    }
  }
  expect(seen.every((key) => key.startsWith("team-b/"))).toBe(true);
  expect(seen).toContain("team-b/here");
});
