// kobun.yaml's resources.<key>.namespaces: one resource watched in namespaces of its own,
// in each of the runtime's modes (a fixed list, globs followed by a namespace watch, the whole
// cluster minus exclusions), while the other resources keep the global namespaces. It needs
// one peering for the cluster; a cluster-scoped resource has no namespaces to choose.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { Registry } from "../../src/declaring/index.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { ConfigError, parseConfigText, resolveSettings } from "../../src/config/index.ts";
import { run } from "../../src/runtime/operator.ts";
import { FatalError } from "../../src/runtime/exits.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { memorySink, Logger } from "../../src/util/log.ts";

let sandbox: Sandbox;
const post = async (path: string, body: unknown) => {
  const response = await fetch(`${sandbox.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  expect(response.status).toBe(201);
};
beforeAll(async () => {
  sandbox = await startSandbox();
  for (const ns of ["alpha", "beta", "team-x", "team-y", "other"]) {
    await post("/api/v1/namespaces", { metadata: { name: ns } });
    await post(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: `cm-${ns}` } });
    await post(`/api/v1/namespaces/${ns}/secrets`, { metadata: { name: `secret-${ns}` } });
  }
});
afterAll(() => sandbox.stop());

const settingsFrom = (text: string) => resolveSettings({ file: "kobun.yaml", fileData: parseConfigText(text, "kobun.yaml") });

/** Runs until every name in `expected` was received; what each resource received (names). */
async function received(text: string, expected: string[]): Promise<{ configmaps: Set<string>; secrets: Set<string> }> {
  const got = { configmaps: new Set<string>(), secrets: new Set<string>() };
  const { promise: all, resolve } = Promise.withResolvers<void>();
  const seen = (into: Set<string>) => ({ name }: { name: string }) => {
    into.add(name);
    if (expected.every((name) => got.configmaps.has(name) || got.secrets.has(name))) resolve();
  };
  const registry = new Registry();
  registry.on.event("v1/configmaps", seen(got.configmaps), { id: "cms" });
  registry.on.event("v1/secrets", seen(got.secrets), { id: "secrets" });
  const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  const stop = new AbortController();
  const running = run({ signal: stop.signal, settings: settingsFrom(text), client, registry, logger: new Logger(memorySink("error")) });
  let timer: Timer | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`not all received: ${JSON.stringify([...got.configmaps, ...got.secrets])}`)), 10_000)));
  try {
    await Promise.race([all, late]);
  } finally {
    clearTimeout(timer);
    stop.abort();
    await running;
    client.close();
  }
  return got;
}

test("a fixed list of its own: secrets watched in beta only, configmaps in the global alpha only", async () => {
  sandbox.stats.reset();
  const got = await received("peering: { standalone: true }\nnamespaces: { include: [alpha] }\nresources:\n  v1/secrets: { namespaces: { include: [beta] } }", ["cm-alpha", "secret-beta"]);
  expect([[...got.configmaps], [...got.secrets]]).toEqual([["cm-alpha"], ["secret-beta"]]);
  const paths = new Set(sandbox.stats.log.filter((r) => r.verb === "list" || r.verb === "watch").map((r) => r.path));
  expect([...paths].filter((p) => p.endsWith("/secrets") || p.endsWith("/configmaps")).sort()).toEqual(["/api/v1/namespaces/alpha/configmaps", "/api/v1/namespaces/beta/secrets"]);
}, 15_000);

test("globs of its own: secrets in the namespaces matching team-* (followed by a namespace watch), configmaps in alpha", async () => {
  sandbox.stats.reset();
  const got = await received("peering: { standalone: true }\nnamespaces: { include: [alpha] }\nresources:\n  v1/secrets: { namespaces: { include: [\"team-*\"], exclude: [team-y] } }", ["cm-alpha", "secret-team-x"]);
  expect([[...got.configmaps], [...got.secrets]]).toEqual([["cm-alpha"], ["secret-team-x"]]);
  expect(sandbox.stats.log.some((r) => r.plural === "namespaces" && r.verb === "watch")).toBe(true);
}, 15_000);

test("the whole cluster minus exclusions for one resource: one cluster-wide secrets watch, configmaps still in alpha", async () => {
  sandbox.stats.reset();
  const want = ["alpha", "beta", "team-x", "team-y"].map((ns) => `secret-${ns}`);
  const got = await received("peering: { standalone: true }\nnamespaces: { include: [alpha] }\nresources:\n  v1/secrets: { namespaces: { exclude: [other] } }", ["cm-alpha", ...want]);
  expect([...got.secrets].filter((name) => name.startsWith("secret-")).sort()).toEqual(want);
  expect([...got.configmaps]).toEqual(["cm-alpha"]);
  expect(sandbox.stats.log.some((r) => r.path === "/api/v1/secrets" && (r.verb === "list" || r.verb === "watch"))).toBe(true);
}, 15_000);

test("namespaces of its own with per-namespace peering is a config error saying which peering works", async () => {
  const registry = new Registry();
  registry.on.event("v1/secrets", () => {}, { id: "secrets" });
  const error = await run({ settings: settingsFrom("namespaces: { include: [alpha] }\nresources:\n  v1/secrets: { namespaces: { include: [beta] } }"), registry, logger: new Logger(memorySink("error")) }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ConfigError);
  expect((error as ConfigError).issues.map((issue) => issue.line)).toEqual([
    "kobun.yaml:3: resources.v1/secrets.namespaces: a resource watched in namespaces of its own needs one peering for the cluster (per-namespace peering follows the global namespaces): set peering.clusterwide: true, peering.mode: lease, or peering.standalone: true",
  ]);
});

test("namespaces for a cluster-scoped resource stops start-up, naming the entry", async () => {
  const registry = new Registry();
  registry.on.event("v1/namespaces", () => {}, { id: "ns" });
  const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
  const error = await run({ settings: settingsFrom("peering: { standalone: true }\nresources:\n  v1/namespaces: { namespaces: { include: [alpha] } }"), client, registry, logger: new Logger(memorySink("error")) })
    .catch((e: unknown) => e)
    .finally(() => client.close());
  expect(error).toBeInstanceOf(FatalError);
  expect((error as FatalError).message).toBe("kobun.yaml:3: resources.v1/namespaces.namespaces: the API server serves namespaces cluster-scoped; it has no namespaces to choose");
}, 15_000);
