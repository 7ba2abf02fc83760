// docs/production.md and docs/peering.md, the claims a sandbox can check: the probe listener's
// /healthz (with on.probe values), /readyz and /metrics (the documented names), --metrics-addr
// serving /metrics alone, JSON logs; `kobun freeze -n NS` / `kobun resume` freezing a running operator in NS alone
// (readiness 503 and kobun_frozen while frozen, nothing handled until the resume); the launcher
// (what `npx kobun` runs) passing a SIGTERM on and honouring KOBUN_BUN; lease mode's $POD_NAMESPACE/$POD_ID.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { startSandbox, type Sandbox } from "kobun/sandbox";
import { cli, createConfigMap, finish, handlerModule, kobun, root, Running, scratchDir, userEnv } from "./helpers.ts";

let sandbox: Sandbox;
let dir: string;
beforeAll(async () => {
  sandbox = await startSandbox();
  dir = scratchDir();
});
afterAll(async () => {
  await sandbox?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const METRICS = [
  "controller_runtime_reconcile_total", "controller_runtime_reconcile_time_seconds", "rest_client_requests_total", "workqueue_",
  "kobun_handler_runs_total", "kobun_handler_duration_seconds", "kobun_watch_events_total", "kobun_watch_restarts_total",
  "kobun_frozen", "kobun_peers_seen", "kobun_lease_held", "kobun_healthy", "kobun_event_loop_lag_seconds", "process_",
];

test("probes: /healthz with on.probe's values, /readyz, /metrics with the documented names; --metrics-addr; JSON logs", async () => {
  const module = handlerModule(dir, "probed.ts", `import { on } from "kobun";
on.create("v1/configmaps", () => ({ seen: true }), { id: "probed", labels: { app: "probed" } });
on.probe(() => 42, { id: "answer" });
`);
  const operator = new Running([process.execPath, cli, "run", module, "--kubeconfig", sandbox.kubeconfigPath, "-n", "default",
    "--standalone", "--liveness", "http://127.0.0.1:0/healthz", "--metrics-addr", "127.0.0.1:0", "--log-format", "json"]);
  try {
    const probes = (await operator.until(/"msg":"serving probes","url":"(http:\/\/127\.0\.0\.1:\d+)\/healthz"/))[1]!;
    const metricsOnly = (await operator.until(/"msg":"serving metrics","url":"(http:\/\/127\.0\.0\.1:\d+)\/metrics"/))[1]!;
    await operator.until(/"msg":"operator ready/);
    await createConfigMap(sandbox, "probed", { app: "probed" });
    await operator.until(/"msg":"Handler 'probed' succeeded\."/);

    const health = await fetch(`${probes}/healthz`);
    expect({ status: health.status, body: await health.json() }).toEqual({ status: 200, body: { healthy: true, problems: {}, probes: { answer: 42 } } });
    const ready = await fetch(`${probes}/readyz`);
    expect({ status: ready.status, body: await ready.json() }).toMatchObject({ status: 200, body: { ready: true, waiting: [] } });
    const metrics = await (await fetch(`${probes}/metrics`)).text();
    expect(METRICS.filter((name) => !metrics.includes(`# TYPE ${name}`))).toEqual([]);
    expect(metrics).toMatch(/^kobun_handler_runs_total\{[^}]*handler="probed"[^}]*\} 1$/m);
    const alone = await fetch(`${metricsOnly}/metrics`);
    expect(alone.status).toBe(200);
    expect(await alone.text()).toContain("# TYPE kobun_healthy");
    expect((await fetch(`${metricsOnly}/healthz`)).status).toBe(404);

    operator.child.kill("SIGTERM");
    expect(await operator.exited()).toBe(0);
    const lines = operator.output.trimEnd().split("\n");
    const notJson = lines.filter((line) => {
      try {
        const parsed = JSON.parse(line);
        return typeof parsed.time !== "string" || typeof parsed.level !== "string" || typeof parsed.msg !== "string";
      } catch {
        return true;
      }
    });
    expect(notJson).toEqual([]);
  } finally {
    operator.kill();
  }
}, 30_000);

test("logs: a line repeated 8 times at once is written 5 times; the 3 left out are counted, written at the stop", async () => {
  const module = handlerModule(dir, "noisy.ts", `import { on } from "kobun";
on.create("v1/configmaps", ({ logger }) => {
  for (let i = 0; i < 8; i++) logger.warn("disk almost full");
}, { id: "noisy", labels: { app: "noisy" } });
`);
  const operator = new Running([process.execPath, cli, "run", module, "--kubeconfig", sandbox.kubeconfigPath, "-n", "default", "--standalone"]);
  try {
    await operator.until(/operator ready/);
    await createConfigMap(sandbox, "noisy", { app: "noisy" });
    await operator.until(/Handler 'noisy' succeeded\./);
    operator.child.kill("SIGTERM");
    expect(await operator.exited()).toBe(0);
    const lines = operator.output.split("\n").filter((line) => line.includes("disk almost full"));
    expect(lines).toHaveLength(6);
    expect(lines.slice(0, 5).every((line) => line.endsWith("handler=noisy"))).toBe(true);
    expect(lines[5]).toEndWith("handler=noisy repeated=3");
  } finally {
    operator.kill();
  }
}, 30_000);

test("kobun freeze -n NS freezes a running operator there (/readyz 503, kobun_frozen 1, nothing handled), not in its other namespace; kobun resume resumes it", async () => {
  const module = handlerModule(dir, "peered.ts",
    'import { on } from "kobun";\non.create("v1/configmaps", ({ name, logger }) => logger.info(`handled ${name}`), { id: "peered", labels: { app: "peered" } });\n');
  // The peering CRDs, as `kobun manifests` prints them for a peering operator, installed as kubectl apply would.
  const manifests = await kobun(["manifests", module, "-n", "default", "--peering", "first-day"]);
  expect(manifests.code).toBe(0);
  const crds = parseAllDocuments(manifests.stdout).map((doc) => doc.toJS()).filter((o) => o.kind === "CustomResourceDefinition");
  expect(crds.map((crd) => crd.metadata.name).sort()).toEqual(["clusterkobunpeerings.kobun.dev", "kobunpeerings.kobun.dev"]);
  for (const crd of crds) {
    const response = await fetch(`${sandbox.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`, {
      method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(crd),
    });
    expect(response.status).toBe(201);
  }
  const connection = ["--kubeconfig", sandbox.kubeconfigPath, "-n", "default"];
  // A second namespace, with no peering object of its own frozen: "frozen apart from the others" (peering.md).
  const other = await fetch(`${sandbox.url}/api/v1/namespaces`, {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ metadata: { name: "first-day-other" } }),
  });
  expect(other.status).toBe(201);
  const operator = new Running([process.execPath, cli, "run", module, ...connection, "-n", "first-day-other",
    "--peering", "first-day", "--liveness", "http://127.0.0.1:0/healthz"]);
  try {
    const probes = (await operator.until(/serving probes url=(http:\/\/127\.0\.0\.1:\d+)\/healthz/))[1]!;
    await operator.until(/operator ready/);
    const frozen = await kobun(["freeze", "--peering", "first-day", "--lifetime", "60", "--message", "upgrading the db", ...connection]);
    expect({ code: frozen.code, out: frozen.stdout.trim() }).toEqual({ code: 0, out: "frozen: peering first-day for 60s" });
    await operator.until(/freezing: a peer with a higher priority is alive/);
    await createConfigMap(sandbox, "during-freeze", { app: "peered" });
    await createConfigMap(sandbox, "elsewhere", { app: "peered" }, "first-day-other");
    await operator.until(/handled elsewhere/);
    const unready = await fetch(`${probes}/readyz`);
    const body = await unready.json() as { ready: boolean; frozen: Record<string, string> };
    expect({ status: unready.status, ready: body.ready }).toEqual({ status: 503, ready: false });
    expect(Object.entries(body.frozen).filter(([key, why]) => key.startsWith("default/") && why.includes("(upgrading the db)"))).toHaveLength(1);
    expect(await (await fetch(`${probes}/metrics`)).text()).toMatch(/^kobun_frozen\{scope="default"\} 1$/m);

    // Without --kubeconfig, like kubectl: $KUBECONFIG (README's commands table).
    const resumed = await kobun(["resume", "--peering", "first-day", "-n", "default"], { env: userEnv({ KUBECONFIG: sandbox.kubeconfigPath }) });
    expect({ code: resumed.code, out: resumed.stdout.trim() }).toEqual({ code: 0, out: "resumed: peering first-day" });
    await operator.until(/handled during-freeze/);
    // Handled only after the resume: the freeze held it.
    const lines = operator.output.split("\n");
    const at = (text: string) => lines.findIndex((line) => line.includes(text));
    expect(at("handled during-freeze")).toBeGreaterThan(at("resuming:"));
    expect(at("handled elsewhere")).toBeLessThan(at("resuming:"));
    expect(at("resuming:")).toBeGreaterThan(at("freezing:"));
    expect((await fetch(`${probes}/readyz`)).status).toBe(200);
    operator.child.kill("SIGTERM");
    expect(await operator.exited()).toBe(0);
  } finally {
    operator.kill();
  }
}, 30_000);

test("lease mode: the Lease lives in $POD_NAMESPACE, held by $POD_ID, and is released at the stop", async () => {
  const module = handlerModule(dir, "leased.ts", 'import { on } from "kobun";\non.create("v1/configmaps", () => {}, { id: "leased", labels: { app: "leased" } });\n');
  const config = handlerModule(dir, "lease.yaml", "peering: { mode: lease, name: first-day-lease }\n");
  const namespace = await fetch(`${sandbox.url}/api/v1/namespaces`, {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ metadata: { name: "first-day-ops" } }),
  });
  expect(namespace.status).toBe(201);
  const operator = new Running([process.execPath, cli, "run", module, "--config", config, "--kubeconfig", sandbox.kubeconfigPath, "-n", "default"],
    { env: userEnv({ POD_NAMESPACE: "first-day-ops", POD_ID: "first-day-pod" }) });
  const lease = async () =>
    (await (await fetch(`${sandbox.url}/apis/coordination.k8s.io/v1/namespaces/first-day-ops/leases/first-day-lease`)).json()) as { spec: { holderIdentity?: string } };
  try {
    await operator.until(/acquired the lease: this replica is active .*lease=first-day-ops\/first-day-lease/);
    expect((await lease()).spec.holderIdentity).toBe("first-day-pod");
    operator.child.kill("SIGTERM");
    expect(await operator.exited()).toBe(0);
    expect(operator.output).toContain("released the lease");
    expect((await lease()).spec.holderIdentity ?? "").toBe("");
  } finally {
    operator.kill();
  }
}, 30_000);

test("the launcher (npx kobun): a SIGTERM sent to it alone reaches kobun, which stops with 0; KOBUN_BUN picks the Bun", async () => {
  const module = handlerModule(dir, "launched.ts", 'import { on } from "kobun";\non.create("v1/configmaps", () => {}, { id: "launched", labels: { app: "launched" } });\n');
  const launcher = join(root, "bin", "kobun.js");
  const operator = new Running(["node", launcher, "run", module, "--kubeconfig", sandbox.kubeconfigPath, "-n", "default", "--standalone"]);
  try {
    await operator.until(/operator ready/);
    operator.child.kill("SIGTERM");
    expect(await operator.exited()).toBe(0);
    expect(operator.output).toContain("stopped abandoned=0");
  } finally {
    operator.kill();
  }
  const [chosen, missing] = await Promise.all([
    finish(["node", launcher, "version"], { env: userEnv({ KOBUN_BUN: process.execPath }) }),
    finish(["node", launcher, "version"], { env: userEnv({ KOBUN_BUN: join(dir, "no-such-bun") }) }),
  ]);
  expect({ code: chosen.code, out: chosen.stdout }).toEqual({ code: 0, out: `kobun ${(await Bun.file(join(root, "package.json")).json()).version} (bun ${Bun.version})\n` });
  expect(missing.code).toBe(1);
  expect(missing.stderr).toContain(`kobun: cannot start Bun: spawn ${join(dir, "no-such-bun")} ENOENT`);
}, 30_000);
