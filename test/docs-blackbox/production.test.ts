// README "Running in production", "Tracing", "Exit codes", "Many namespaces", "Scaling out", docs/production.md, as
// a user meets them (`kobun run` against a sandbox on 127.0.0.1): /readyz before the first sync, /healthz on a blocked
// loop, /metrics' series (text, OpenMetrics), logs and -q/-v, no token or Secret value logged, SIGTERM and its grace,
// exit codes of listeners and kubeconfigs, OTLP traces, the cluster-wide switch, and two sharded replicas.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { startSandbox, type Sandbox } from "kobun/sandbox";
import { cli, createConfigMap, handlerModule, kobun, kubeconfigFile, Running, scratchDir, userEnv } from
  "../firstday-blackbox/helpers.ts";

let [sandbox, dir] = [undefined as unknown as Sandbox, ""];
beforeAll(async () => void ([sandbox, dir] = [await startSandbox(), scratchDir()]));
afterAll(async () => void (await sandbox?.stop(), rmSync(dir, { recursive: true, force: true })));

const env = (extra: Record<string, string> = {}) => userEnv({ HOME: dir, ...extra });
const post = (url: string, body: unknown, headers: Record<string, string> = {}) => fetch(url,
  { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
const namespace = async (name: string) =>
  expect((await post(`${sandbox.url}/api/v1/namespaces`, { metadata: { name } })).status).toBe(201);
const module = (name: string, source: string) => handlerModule(dir, name, `import { on } from "kobun";\n${source}\n`);
const file = (name: string, text: string) => handlerModule(dir, name, text);
const PROBES = ["--liveness", "http://127.0.0.1:0/healthz"];
/** `kobun run MODULE --kubeconfig <the sandbox's> FLAGS`, as a user runs it; `using` kills it at the end. */
const operator = (path: string, flags: string[], extra: Record<string, string> = {}, config = sandbox.kubeconfigPath) =>
  Object.assign(new Running([process.execPath, cli, "run", path, "--kubeconfig", config, ...flags],
    { cwd: dir, env: env(extra) }), { [Symbol.dispose](this: Running) { this.kill(); } });
/** Kills them at the end of the scope (`using`), whatever happened. */
const killing = (...ops: Running[]) => ({ [Symbol.dispose]: () => ops.forEach((op) => op.kill()) });
const probes = async (op: Running) => (await op.until(/serving probes url=(http:\/\/127\.0\.0\.1:\d+)\/healthz/))[1]!;
const metrics = async (base: string) => await (await fetch(`${base}/metrics`)).text();
/** The value of one series (its exact name and labels), or undefined when it is not exposed. */
const sample = (text: string, series: string) => ((line?: string) => line ? Number(line.split(" ").at(-1)) : undefined)(
  text.split("\n").find((l) => l.startsWith(`${series} `)));
/** Polls `get` every 50 ms until it returns something other than undefined/false; fails after `ms`. */
async function poll<T>(what: string, get: () => Promise<T | undefined | false>, ms = 10_000): Promise<T> {
  for (const end = Date.now() + ms; Date.now() < end; await Bun.sleep(50)) {
    const value = await get();
    if (value !== undefined && value !== false) return value;
  }
  throw new Error(`${what}: not within ${ms} ms`);
}

test("/readyz: 503 naming the watch until the objects listed at start were handled once, then 200", async () => {
  await namespace("ready-ns");
  await createConfigMap(sandbox, "early", { app: "ready" }, "ready-ns");
  const release = Promise.withResolvers<void>();
  using hold = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => release.promise.then(() => new Response()) });
  const path = module("ready.ts", `on.create("v1/configmaps", async ({ logger }) => {
  logger.info("holding"); await fetch(process.env.HOLD_URL!); }, { id: "slow", labels: { app: "ready" } });`);
  using op = operator(path, ["-n", "ready-ns", "--standalone", ...PROBES],
    { HOLD_URL: `http://127.0.0.1:${hold.port}` });
  const base = await probes(op);
  await op.until(/holding/);
  const unready = await fetch(`${base}/readyz`);
  expect({ status: unready.status, body: await unready.json() })
    .toMatchObject({ status: 503, body: { ready: false, waiting: ["watch configmaps in ready-ns"] } });
  expect((await fetch(`${base}/healthz`)).status).toBe(200);       // not ready is not unhealthy
  release.resolve();
  await op.until(/Handler 'slow' succeeded/);
  expect(await poll("/readyz 200", async () => (await fetch(`${base}/readyz`)).status === 200)).toBe(true);
}, 30_000);

test("/healthz: 503 with an 'event loop' problem after a handler blocks past probes.eventLoopLimit", async () => {
  await namespace("loop-ns");
  const path = module("blocking.ts", `on.create("v1/configmaps", () => {
  for (const end = Date.now() + 1200; Date.now() < end;) {} }, { id: "busy", labels: { app: "busy" } });`);
  const yaml = file("loop.yaml", "probes: { eventLoopLimit: 500ms }\n");
  using op = operator(path, ["-n", "loop-ns", "--standalone", ...PROBES, "--config", yaml]);
  const base = await probes(op);
  await op.until(/operator ready/);
  expect((await fetch(`${base}/healthz`)).status).toBe(200);
  await createConfigMap(sandbox, "blocker", { app: "busy" }, "loop-ns");
  await op.until(/Handler 'busy' succeeded/);
  const health = await poll("/healthz 503", async () => ((response) => response.status === 503 && response.json())(
    await fetch(`${base}/healthz`)) as Promise<{ healthy: boolean; problems: Record<string, string> }>, 5_000);
  expect(health.healthy).toBe(false);
  expect(health.problems["event loop"]).toMatch(/^blocked for [\d.]+ s at once at .*\(limit 0\.5 s\)/);
  expect(sample(await metrics(base), "kobun_healthy")).toBe(0);
}, 30_000);

test("/metrics: documented series and labels after a create with a retried handler; OpenMetrics alone", async () => {
  await namespace("metrics-ns");
  const path = module("metered.ts", `import { TemporaryError } from "kobun";
on.create("v1/configmaps", () => {}, { id: "plain", labels: { app: "metered" } });
on.create("v1/configmaps", ({ retry }) => { if (retry === 0) throw new TemporaryError("not yet", { delay: 0.2 }); },
  { id: "flaky", labels: { app: "metered" } });`);
  using op = operator(path, ["-n", "metrics-ns", "--standalone", ...PROBES,
    "--config", file("metered.yaml", "workers: { limit: 7 }\n"), "--metrics-addr", "http://127.0.0.1:0"]);
  const base = await probes(op);
  const alone = (await op.until(/serving metrics url=(http:\/\/127\.0\.0\.1:\d+)\/metrics/))[1]!;
  await op.until(/operator ready/);
  await createConfigMap(sandbox, "metered", { app: "metered" }, "metrics-ns");
  await op.until(/Handler 'flaky' succeeded/);
  const success = 'controller_runtime_reconcile_total{controller="configmaps",result="success"}';
  await poll("a cycle counted as success", async () => sample(await metrics(base), success), 5_000);   // its PATCH
  const response = await fetch(`${base}/metrics`);
  expect(response.headers.get("content-type")).toStartWith("text/plain; version=0.0.4");
  const text = await response.text();
  const host = new URL(sandbox.url).host;
  const runs = (handler: string, outcome: string) =>
    `kobun_handler_runs_total{controller="configmaps",handler="${handler}",cause="create",outcome="${outcome}"}`;
  const exact: Record<string, number> = { [runs("plain", "success")]: 1, [runs("flaky", "retry")]: 1,
    [runs("flaky", "success")]: 1, 'controller_runtime_max_concurrent_reconciles{controller="configmaps"}': 7,
    'workqueue_depth{name="configmaps",controller="configmaps"}': 0, kobun_watch_connection_budget: 192,
    'kobun_handler_duration_seconds_count{controller="configmaps",handler="flaky"}': 2 };
  expect(Object.fromEntries(Object.keys(exact).map((series) => [series, sample(text, series)]))).toEqual(exact);
  const counted = ['controller_runtime_reconcile_total{controller="configmaps",result="requeue_after"}',
    'workqueue_adds_total{name="configmaps",controller="configmaps"}',
    'workqueue_retries_total{name="configmaps",controller="configmaps"}',
    'kobun_watch_events_total{resource="configmaps",type="ADDED"}',
    `rest_client_requests_total{code="200",method="PATCH",host="${host}"}`,
    `rest_client_request_duration_seconds_count{verb="PATCH",host="${host}"}`];
  expect(counted.filter((series) => !(sample(text, series)! > 0))).toEqual([]);
  expect(Math.abs(sample(text, "process_start_time_seconds")! - Date.now() / 1000)).toBeLessThan(120);
  // "on /metrics from the first time it happens": nothing failed, so not there
  expect(text).not.toContain("kobun_processing_failures_total");
  const open = await fetch(`${alone}/metrics`, { headers: { accept: "application/openmetrics-text;version=1.0.0" } });
  expect(open.headers.get("content-type")).toStartWith("application/openmetrics-text; version=1.0.0");
  const openText = await open.text();
  expect(openText).toEndWith("# EOF\n");
  expect(openText).toContain("# TYPE kobun_handler_runs counter\n");   // OpenMetrics: the family without _total
  expect(openText).toContain(`${runs("flaky", "success")} 1\n`);
  expect((await fetch(`${alone}/readyz`)).status).toBe(404);           // /metrics alone
}, 30_000);

test("logs: plain `time LEVEL message key=value`, the object's fields; -q warnings only, -v debug too", async () => {
  const path = module("levels.ts", `on.create("v1/configmaps", ({ logger }) => {
  logger.debug("a debug line"); logger.info("an info line", { size: 3 }); logger.warn("a warn line");
}, { id: "levels", labels: { app: "levels" } });`);
  const ops = await Promise.all([[], ["-q"], ["-v"]].map(async (level, i) => {   // apart: the first to handle marks it
    await namespace(`log-${i}`);
    await createConfigMap(sandbox, "leveled", { app: "levels" }, `log-${i}`);   // there at start
    return operator(path, ["-n", `log-${i}`, "--standalone", ...level]);
  }));
  using _ops = killing(...ops);
  await Promise.all(ops.map((op) => op.until(/a warn line/)));   // the handler's last line
  const [normal, quiet, verbose] = ops.map((op) => op.output) as [string, string, string];
  const time = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/.source;
  expect(normal).toMatch(new RegExp(`${time} INFO +an info line .*namespace=log-0 name=leveled.* size=3$`, "m"));
  expect(normal).not.toContain("a debug line");
  expect(quiet.split("\n").filter((l) => / (INFO|DEBUG) /.test(l))).toEqual([]);
  expect(quiet).toMatch(/ WARN +a warn line /);
  expect(verbose).toMatch(/ DEBUG +a debug line .*name=leveled/);
}, 30_000);

test("a -v json log carries neither the kubeconfig's token nor a Secret's values (api.md: never logged)", async () => {
  const [token, guarded] = ["tok-Zq81-never-in-a-log", await startSandbox({ token: "tok-Zq81-never-in-a-log" })];
  await using _sandbox = { [Symbol.asyncDispose]: () => guarded.stop() };
  const auth = { authorization: `Bearer ${token}` };
  const path = module("secrets.ts", `on.create("v1/secrets", ({ logger, body }) =>
  logger.info("saw", { keys: Object.keys(body.data ?? {}) }), { id: "seen" });
on.update("v1/secrets", ({ diff, logger }) => logger.info("changed", { paths: diff.map((d) => d.path.join(".")) }),
  { id: "rotated" });`);
  const kubeconfig = kubeconfigFile(dir, "guarded.kubeconfig", guarded.url, token);
  using op = operator(path, ["-n", "default", "--standalone", "-v", "--log-format", "json"], {}, kubeconfig);
  await op.until(/operator ready/);
  const secret = (v: string) => ({ metadata: { name: "db" }, data: { password: btoa(v) } });
  const secrets = `${guarded.url}/api/v1/namespaces/default/secrets`;
  expect((await post(secrets, secret("hunter2-1"), auth)).status).toBe(201);
  await op.until(/Handler 'seen' succeeded/);
  const patched = await fetch(`${secrets}/db`, { method: "PATCH", body: JSON.stringify(secret("hunter2-2")),
    headers: { "content-type": "application/merge-patch+json", ...auth } });
  expect(patched.status).toBe(200);
  await op.until(/Handler 'rotated' succeeded/);
  op.child.kill("SIGTERM");
  expect(await op.exited()).toBe(0);
  expect(op.output).toContain('"paths":["data"]');   // the change is named...
  const leaked = [token, "hunter2", btoa("hunter2-1"), btoa("hunter2-2")].filter((s) => op.output.includes(s));
  expect(leaked).toEqual([]);                         // ...its values never written
}, 30_000);

test("SIGTERM: signals abort; a handler that returns ends the stop at once, one that does not: abandoned", async () => {
  await Promise.all(["stop-ns", "stuck-ns"].map(namespace));
  const path = module("stoppable.ts", `on.create("v1/configmaps", async ({ logger, signal }) => {
  logger.info("working"); await new Promise((resolve) => signal.addEventListener("abort", resolve));
  logger.info("aborted, returning"); }, { id: "work", labels: { app: "stop" } });
on.delete("v1/configmaps", () => {}, { id: "cleanup", labels: { app: "stop" } });
on.create("v1/configmaps", ({ logger }) => { logger.info("working"); return new Promise(() => {}); },
  { id: "stubborn", labels: { app: "stuck" } });`);
  const grace = ["--config", file("grace.yaml", "shutdown: { gracePeriod: 1s }\n")];
  const ops = [operator(path, ["-n", "stop-ns", "--standalone"]),
    operator(path, ["-n", "stuck-ns", "--standalone", ...grace])];
  using _ops = killing(...ops);
  await Promise.all(ops.map((op) => op.until(/operator ready/)));
  for (const app of ["stop", "stuck"]) await createConfigMap(sandbox, `in-${app}`, { app }, `${app}-ns`);
  await Promise.all(ops.map((op) => op.until(/working/)));
  const [cooperative, stubborn] = await Promise.all(ops.map(async (op) => {
    const sent = (op.child.kill("SIGTERM"), performance.now());
    return { code: await op.exited(), ms: performance.now() - sent };
  }));
  expect({ ...cooperative!, ms: cooperative!.ms < 5_000 }).toEqual({ code: 0, ms: true });   // no need for the 5 s
  expect(ops[0]!.output).toMatch(/working[^]*stopping gracePeriod=5[^]*aborted, returning[^]*stopped abandoned=0/);
  const left: any = await (await fetch(`${sandbox.url}/api/v1/namespaces/stop-ns/configmaps/in-stop`)).json();
  expect(left.metadata.finalizers?.length ?? 0).toBeGreaterThan(0);   // the delete handler's hold survives the stop
  expect({ ...stubborn!, ms: stubborn!.ms >= 900 && stubborn!.ms < 4_000 }).toEqual({ code: 0, ms: true });   // 1 s
  expect(ops[1]!.output).toMatch(/abandon.*stubborn[^]*stopped abandoned=1/i);
}, 30_000);

test("SIGTERM: a stuck handler, then a stuck on.cleanup: each abandoned at its grace, exit 0 within twice it",
  async () => {
  await namespace("twice-ns");
  const path = module("twice.ts", `on.create("v1/configmaps", ({ logger }) => { logger.info("working");
  return new Promise(() => {}); }, { id: "stuck", labels: { app: "twice" } });
on.cleanup(({ logger }) => { logger.info("cleaning"); return new Promise(() => {}); }, { id: "closing" });`);
  const grace = file("twice.yaml", "shutdown: { gracePeriod: 1s }\n");
  using op = operator(path, ["-n", "twice-ns", "--standalone", "--config", grace]);
  await op.until(/operator ready/);
  await createConfigMap(sandbox, "in-twice", { app: "twice" }, "twice-ns");
  await op.until(/working/);
  const sent = (op.child.kill("SIGTERM"), performance.now());
  expect(await op.exited()).toBe(0);
  const ms = performance.now() - sent;
  expect({ atLeastTwoGraces: ms >= 1_900, withinTheBound: ms < 2_000 + 2_500 }).toEqual({ atLeastTwoGraces: true,
    withinTheBound: true });
  expect(op.output).toMatch(/abandon.*stuck[^]*stopped abandoned=1[^]*cleaning[^]*abandoned a cleanup.*closing/);
}, 30_000);

test("--metrics-addr taken: exit 5, malformed: 3 (a bad flag value); a broken kubeconfig: 4", async () => {
  const path = module("exits.ts", 'on.create("v1/configmaps", () => {}, { id: "exits", labels: { app: "exits" } });');
  using taken = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const kubeconfigs = [`${dir}/no-such.kubeconfig`, file("garbled.kubeconfig", "apiVersion: v1\nclusters: [ {\n"),
    file("nocontext.kubeconfig", "apiVersion: v1\nkind: Config\nclusters: []\nusers: []\ncontexts: []\n")];
  const run = (flags: string[], kubeconfig = sandbox.kubeconfigPath) => kobun(["run", path, "--kubeconfig", kubeconfig,
    "-n", "default", "--standalone", ...flags], { cwd: dir, env: env() });
  const [busy, bad, ...broken] = await Promise.all([run(["--metrics-addr", `127.0.0.1:${taken.port}`]),
    run(["--metrics-addr", "127.0.0.1:99999"]), ...kubeconfigs.map((k) => run([], k))]);
  expect({ code: busy.code, named: busy.stderr.includes(String(taken.port)) }).toEqual({ code: 5, named: true });
  // each: 4 (README's exit codes: no usable kubeconfig), the file named, an error saying what (no crash's stack)
  expect(broken.map((r, i) => [kubeconfigs[i], r.code, r.stderr.includes(kubeconfigs[i]!),
    /^\s+at /m.test(r.stderr)])).toEqual(kubeconfigs.map((k) => [k, 4, true, false]));
  expect(broken[2]!.stderr).toContain("has no current-context and no contexts to choose from");
  // README "Running in production": "a malformed one is a bad flag value: 3".
  expect({ code: bad.code, named: bad.stderr.includes("99999") }).toEqual({ code: 3, named: true });
}, 30_000);

test("tracing: OTLP spans of a cycle, its handler, its PATCH; trace_id= on its log lines; no error text", async () => {
  await namespace("trace-ns");
  const bodies: any[] = [];
  using collector = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: async (request) =>
    Response.json(new URL(request.url).pathname === "/v1/traces" && bodies.push(await request.json())) });
  const path = module("traced.ts", `import { TemporaryError } from "kobun";
on.create("v1/configmaps", ({ retry, logger }) => { logger.info("tracing me");
  if (retry === 0) throw new TemporaryError("password=hunter2 refused", { delay: 0.1 }); },
  { id: "traced", labels: { app: "traced" } });`);
  using op = operator(path, ["-n", "trace-ns", "--standalone"],
    { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collector.port}`, OTEL_SERVICE_NAME: "traced-op" });
  const attrs = (span: any) => Object.fromEntries(span.attributes.map((a: any) => [a.key, Object.values(a.value)[0]]));
  const spans = () =>
    bodies.flatMap((b) => b.resourceSpans.flatMap((r: any) => r.scopeSpans.flatMap((s: any) => s.spans)));
  await op.until(/operator ready/);
  await createConfigMap(sandbox, "traced", { app: "traced" }, "trace-ns");
  const handler = await poll("the successful handler's span", async () =>
    spans().find((s) => s.name === "handler traced" && attrs(s)["kobun.outcome"] === "success"), 15_000);
  const inTrace = () => spans().filter((s) => s.traceId === handler.traceId);
  const [root, write] = await poll("its cycle's span and PATCH", async () => {
    const cycle = inTrace().find((s) => s.spanId === handler.parentSpanId);
    const found = [cycle, inTrace().find((s) => s.name === "PATCH" && s.parentSpanId === cycle?.spanId)];
    return found.every(Boolean) && found;
  });
  expect({ name: root.name, ...attrs(root) }).toMatchObject({ name: "cycle configmaps", "kobun.resource": "configmaps",
    "k8s.namespace.name": "trace-ns", "kobun.object.name": "traced", "kobun.outcome": "written",
    "kobun.object.uid": expect.stringMatching(/^[0-9a-f-]{36}$/) });
  expect(attrs(handler)).toMatchObject({ "kobun.handler": "traced", "kobun.retry": 1 });
  expect(attrs(write)).toMatchObject({ "http.request.method": "PATCH", "http.response.status_code": 200,
    "url.path": "/api/v1/namespaces/trace-ns/configmaps/traced" });
  expect(bodies[0].resourceSpans[0].resource.attributes)
    .toContainEqual({ key: "service.name", value: { stringValue: "traced-op" } });
  expect(op.output).toMatch(new RegExp(`tracing me .*trace_id=${root.traceId}`));
  expect(JSON.stringify(bodies)).not.toContain("hunter2");
  // OpenTelemetry's server.address is the host alone (the port is server.port)
  expect(attrs(write)["server.address"]).toBe("127.0.0.1");
}, 30_000);

test("many namespaces: above clusterWideAbove one cluster-wide watch serves them (logged); the budget", async () => {
  const names = ["wide-a", "wide-b", "wide-c"];
  await Promise.all([...names, "wide-out"].map(namespace));
  const path = module("wide.ts", `on.create("v1/configmaps", ({ name, logger }) => logger.info(\`handled \${name}\`),
  { id: "wide", labels: { app: "wide" } });`);
  const yaml = file("wide.yaml", "watching: { clusterWideAbove: 2 }\n");
  using op = operator(path, [...names.flatMap((n) => ["-n", n]), "--config", yaml, "--standalone", ...PROBES]);
  using small = operator(path, ["-n", "wide-out", "--standalone", ...PROBES], { BUN_CONFIG_MAX_HTTP_REQUESTS: "80" });
  const base = await probes(op);
  await op.until(/operator ready/);
  expect(op.output).toMatch(/one cluster-wide watch per resource.* namespaces=3 clusterWideAbove=2$/m);   // the switch
  await createConfigMap(sandbox, "outside", { app: "wide" }, "wide-out");   // not watched here: dropped
  for (const n of names) await createConfigMap(sandbox, `in-${n}`, { app: "wide" }, n);
  await Promise.all(names.map((n) => op.until(new RegExp(`handled in-${n}`))));
  expect(sample(await metrics(base), "kobun_watch_streams_open")).toBe(1);
  expect(op.output).not.toContain("handled outside");
  // "three quarters of that ..., and leave at least 64 to requests whatever the limit (at 80, 16 watches)"
  expect(sample(await metrics(await probes(small)), "kobun_watch_connection_budget")).toBe(16);
}, 30_000);

test("scaling out: --replicas 2 --shards 4: 2 shards each, Leases named and counted; each object once", async () => {
  await namespace("shard-ns");
  const path = module("sharded.ts", `on.create("v1/configmaps", ({ name, logger }) => logger.info(\`handled \${name}\`),
  { id: "sharded", labels: { app: "sharded" } });`);
  const flags = ["-n", "shard-ns", "--replicas", "2", "--shards", "4", ...PROBES];
  const ops = [operator(path, flags), operator(path, flags)];
  using _ops = killing(...ops);
  const bases = await Promise.all(ops.map(probes));
  const owned = async () => Promise.all(bases.map(async (b) => sample(await metrics(b), "kobun_shards_owned")));
  expect(await poll("2 shards each", async () => (await owned()).every((n) => n === 2) && owned())).toEqual([2, 2]);
  const shardsOf = async (b: string) => [...(await metrics(b)).matchAll(/^kobun_shard_owned\{shard="(\d+)"\} 1$/gm)]
    .map((m) => m[1]);
  expect((await Promise.all(bases.map(shardsOf))).flat().sort()).toEqual(["0", "1", "2", "3"]);
  const leases: any = await (await fetch(
    `${sandbox.url}/apis/coordination.k8s.io/v1/namespaces/shard-ns/leases`)).json();
  const shardLeases = leases.items.filter((l: any) => /^kobun-default-shard-\d$/.test(l.metadata.name))
    .map((l: any) => [l.metadata.name, Boolean(l.spec.holderIdentity),
      { ...l.metadata.labels, ...l.metadata.annotations }["kobun.dev/shards"]]);
  expect(shardLeases.sort()).toEqual([0, 1, 2, 3].map((i) => [`kobun-default-shard-${i}`, true, "4"]));
  const objects = Array.from({ length: 8 }, (_, i) => `obj-${i}`);
  await Promise.all(objects.map((name) => createConfigMap(sandbox, name, { app: "sharded" }, "shard-ns")));
  const handled = () => ops.flatMap((op) => [...op.output.matchAll(/handled (obj-\d)/g)].map((m) => m[1]));
  await poll("every object handled", async () => objects.every((o) => handled().includes(o)));
  expect(handled().sort()).toEqual(objects);
  ops.forEach((op) => op.child.kill("SIGTERM"));
  expect(await Promise.all(ops.map((op) => op.exited()))).toEqual([0, 0]);
}, 30_000);
