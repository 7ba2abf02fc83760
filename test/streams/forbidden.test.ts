// A 403 on a watch ends the operator with exit code 5 (README: "Exit codes"): at once when a
// stream started with the operator is forbidden before it ever worked (a deploy error), and
// after FORBIDDEN_LIMIT forbidden attempts in a row when permissions are lost later. The
// sandbox enforces RBAC for service-account tokens as kube-apiserver does.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/index.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { FatalError } from "../../src/runtime/exits.ts";
import { FORBIDDEN_LIMIT } from "../../src/streams/forbidden.ts";
import { run } from "../../src/runtime/operator.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { Logger, memorySink } from "../../src/util/log.ts";
import { eventually, startOperator } from "../runtime/helpers.ts";
import { asAdmin, restrictedKubeconfig } from "../runtime/restricted.ts";

const ADMIN = "admin-token";
const CONFIGMAPS = [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "list", "watch", "patch"] }];
let sandbox: Sandbox;
beforeAll(async () => (sandbox = await startSandbox({ token: ADMIN })));
afterAll(() => sandbox.stop());

/** Settles with what `running` ended with (its value or its error), or "still running" if it has not ended within `ms`. */
function outcome(running: Promise<unknown>, ms: number): Promise<unknown> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise((resolve) => (timer = setTimeout(() => resolve("still running"), ms)));
  return Promise.race([running.then((value) => value, (error) => error), late]).finally(() => clearTimeout(timer));
}

function noop(): Registry {
  const registry = new Registry();
  registry.on.create("v1/configmaps", () => {}, { id: "noop" });
  return registry;
}

/** Runs a standalone operator with no permissions but the ones of `home`; returns how run() ended within 10 s. */
async function runWithoutPermissions(
  home: string, namespaces: string[], registry = noop(), grants: Parameters<typeof restrictedKubeconfig>[3] = {},
): Promise<unknown> {
  const kubeconfig = await restrictedKubeconfig(sandbox, ADMIN, home, grants);
  const client = await KubeClient.connect({ kubeconfig });
  const stop = new AbortController();
  const running = run({
    signal: stop.signal, client, registry, logger: new Logger(memorySink("info")),
    settings: resolveSettings({ flags: { namespaces, standalone: true } }),
  });
  const ended = await outcome(running, 10_000);
  stop.abort();
  await running.catch(() => {});
  client.close();
  return ended;
}

test("a namespace the operator may not watch at start-up ends run() with a FatalError (exit 5) naming resource, namespace and verb", async () => {
  await asAdmin(sandbox, ADMIN, "POST", "/api/v1/namespaces", { metadata: { name: "fb-denied" } });
  const ended = await runWithoutPermissions("fb-home-1", ["fb-denied"]);
  expect(ended).toBeInstanceOf(FatalError);
  const error = ended as FatalError;
  expect(error.exitCode).toBe(5);
  expect(error.message).toContain("permissions lacking at start-up");
  expect(error.message).toContain("configmaps");
  expect(error.message).toContain('namespace "fb-denied"');
  expect(error.message).toMatch(/cannot (list|watch)/);
}, 20_000);

test("a resource watched only for an index is no exception: forbidden at start-up, exit 5 at once (docs/indexes.md)", async () => {
  await asAdmin(sandbox, ADMIN, "POST", "/api/v1/namespaces", { metadata: { name: "fb-index" } });
  const registry = noop();
  registry.on.index("v1/serviceaccounts", ({ name }) => ({ [name]: true }), { id: "accounts" });
  const ended = await runWithoutPermissions("fb-home-5", ["fb-index"], registry, { roles: { "fb-index": CONFIGMAPS } });
  expect(ended).toBeInstanceOf(FatalError);
  expect((ended as FatalError).exitCode).toBe(5);
  expect((ended as FatalError).message).toMatch(/cannot (list|watch) serviceaccounts in namespace "fb-index"/);
}, 20_000);

test("an operator that may not follow the namespaces its globs match ends run() with a FatalError (exit 5) at once", async () => {
  const ended = await runWithoutPermissions("fb-home-4", ["fb-*"]);
  expect(ended).toBeInstanceOf(FatalError);
  expect((ended as FatalError).exitCode).toBe(5);
  expect((ended as FatalError).message).toMatch(/permissions lacking at start-up: forbidden: cannot (list|watch) namespaces cluster-wide/);
}, 20_000);

test("kobun run exits 5 at once when its service account may not watch a served namespace", async () => {
  await asAdmin(sandbox, ADMIN, "POST", "/api/v1/namespaces", { metadata: { name: "fb-cli" } });
  const kubeconfig = await restrictedKubeconfig(sandbox, ADMIN, "fb-home-2", {});
  const op = startOperator(["run", "--kubeconfig", kubeconfig, "--standalone", "-n", "fb-cli", join(import.meta.dir, "../runtime/handlers")]);
  const code = await outcome(op.child.exited, 15_000);
  if (code === "still running") op.child.kill("SIGKILL");
  expect(code).toBe(5);
  const message = op.lines.find((l) => l.startsWith("kobun: "));
  expect(message).toContain("permissions lacking at start-up");
  expect(message).toContain('configmaps in namespace "fb-cli"');
}, 30_000);

test(`permissions lost later are retried and reported, and exit 5 after ${FORBIDDEN_LIMIT} forbidden attempts in a row`, async () => {
  await asAdmin(sandbox, ADMIN, "POST", "/api/v1/namespaces", { metadata: { name: "fb-lost" } });
  const kubeconfig = await restrictedKubeconfig(sandbox, ADMIN, "fb-home-3", { roles: { "fb-lost": CONFIGMAPS } });
  const client = await KubeClient.connect({ kubeconfig });
  const registry = new Registry();
  const handled: string[] = [];
  registry.on.create("v1/configmaps", ({ name }) => void handled.push(name), { id: "record" });
  const sink = memorySink("info");
  const stop = new AbortController();
  let health: import("../../src/observability/health.ts").Health | undefined;
  const running = run({
    signal: stop.signal, client, registry, logger: new Logger(sink),
    settings: resolveSettings({ fileData: { watching: { backoff: { initial: "20ms", max: "40ms" } } }, flags: { namespaces: ["fb-lost"], standalone: true } }),
    onStarted: (info) => (health = info.health),
  });
  try {
    // The stream works: a change arrives through the watch and is handled.
    await eventually(() => sandbox.stats.openWatches() > 0, "the configmap watch");
    await asAdmin(sandbox, ADMIN, "POST", "/api/v1/namespaces/fb-lost/configmaps", { metadata: { name: "before" } });
    await eventually(() => handled.includes("before"), "the configmap to be handled");
    // RBAC changes under the operator; its watch reconnects and is forbidden from now on.
    await asAdmin(sandbox, ADMIN, "DELETE", "/apis/rbac.authorization.k8s.io/v1/namespaces/fb-lost/rolebindings/op");
    sandbox.faults.dropWatches();
    await eventually(() => health?.healthy === false, "the forbidden watch to be reported");
    const ended = await outcome(running, 15_000);
    expect(ended).toBeInstanceOf(FatalError);
    expect((ended as FatalError).exitCode).toBe(5);
    expect((ended as FatalError).message).toContain(`forbidden ${FORBIDDEN_LIMIT} times in a row`);
    expect((ended as FatalError).message).toContain('configmaps in namespace "fb-lost"');
    const retried = sink.lines.filter((l) => /watching failed; restarting/.test(l) && /forbidden/.test(l));
    expect(retried).toHaveLength(FORBIDDEN_LIMIT - 1);
    // Each failure that is retried is counted; the last one ends the operator instead.
    expect(health!.exposition()).toContain(`\nkobun_watch_failures_total{resource="configmaps"} ${FORBIDDEN_LIMIT - 1}\n`);
  } finally {
    stop.abort();
    await running.catch(() => {});
    client.close();
  }
}, 30_000);
