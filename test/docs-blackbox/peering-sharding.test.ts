// docs/peering.md, README "Scaling out" and its freeze lines, `kobun freeze --help`, as a user meets them: `kobun run`
// against a sandbox on 127.0.0.1 with crds/peering-kobun.dev.yaml installed; waits on log lines and watches.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { startSandbox, type Sandbox } from "kobun/sandbox";
import { cli, createConfigMap, handlerModule, kobun, root, Running, scratchDir, untilObject, userEnv } from
  "../firstday-blackbox/helpers.ts";

let [sandbox, dir, mod] = [undefined as unknown as Sandbox, "", ""];
const post = (path: string, body: unknown) => fetch(`${sandbox.url}${path}`,
  { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
const namespace = async (name: string) =>
  expect((await post("/api/v1/namespaces", { metadata: { name } })).status).toBe(201);
beforeAll(async () => {
  [sandbox, dir] = [await startSandbox(), scratchDir()];
  const crds = Bun.YAML.parse(await Bun.file(join(root, "crds", "peering-kobun.dev.yaml")).text()) as unknown[];
  const crdsAt = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
  for (const crd of crds) expect((await post(crdsAt, crd)).status).toBe(201);
  // "started NAME" first; polite* (or any, under HOLD) waits for its signal; rude* ignores it for 6 s.
  mod = handlerModule(dir, "h.ts", `import { on } from "kobun";
on.create("v1/configmaps", async ({ name, logger, signal }) => {
  logger.info(\`started \${name}\`);
  if (name.startsWith("polite") || process.env.HOLD) {
    await new Promise((r) => signal.addEventListener("abort", r, { once: true }));
    return void logger.info(\`aborted \${name}\`);
  }
  if (name.startsWith("rude")) await new Promise((r) => setTimeout(r, 6000));
  logger.info(\`handled \${name}\`);
}, { id: "h" });\n`);
});
afterAll(async () => void (await sandbox?.stop(), rmSync(dir, { recursive: true, force: true })));

const env = (extra: Record<string, string> = {}) => userEnv({ HOME: dir, ...extra });
const file = (name: string, text: string) => handlerModule(dir, name, text);
/** `kobun run h.ts --kubeconfig <the sandbox's> ARGS`; `using` kills it at the end of the scope. */
const operator = (args: string[], extra: Record<string, string> = {}) => Object.assign(
  new Running([process.execPath, cli, "run", mod, "--kubeconfig", sandbox.kubeconfigPath, ...args],
    { cwd: dir, env: env(extra) }),
  { [Symbol.dispose](this: Running) { this.kill(); } });
/** `kobun ARGS --kubeconfig <the sandbox's>` to completion. */
const run = (...args: string[]) => kobun([...args, "--kubeconfig", sandbox.kubeconfigPath], { cwd: dir, env: env() });
const peeringPath = (ns: string, name: string) => `/apis/kobun.dev/v1/namespaces/${ns}/kobunpeerings/${name}`;
const read = async (path: string): Promise<any> => (await fetch(`${sandbox.url}${path}`)).json();
const until = (path: string, holds: (o: any) => boolean) => untilObject(sandbox.url, "none", path, holds);
type PeerRecord = { priority: number; lifetime: number; lastseen: string; message?: string };
const records = (o: any) => Object.values(o?.status ?? {}) as PeerRecord[];
const probes = async (op: Running) => (await op.until(/serving probes url=(http:\/\/127\.0\.0\.1:\d+)\/healthz/))[1]!;
const PROBES = ["--liveness", "http://127.0.0.1:0/healthz"];
const metric = async (base: string, series: string) => Number((await (await fetch(`${base}/metrics`)).text())
  .split("\n").find((line) => line.startsWith(`${series} `))?.split(" ").at(-1));
/** The first of `ops` whose output matches `pattern`. */
const anyOf = (ops: Running[], pattern: RegExp) => Promise.any(ops.map((op) => op.until(pattern).then(() => op)));
const count = (text: string, pattern: RegExp) => [...text.matchAll(new RegExp(pattern, "g"))].length;
const time = (op: Running, what: string) => Date.parse(op.output.match(new RegExp(`^(\\S+) .*${what}`, "m"))![1]!);

test("same peering: the lower priority freezes while a --dev (666) peer lives, resumes when it exits", async () => {
  await namespace("p1");
  using low = operator(["-n", "p1", "--peering", "shop", "--priority", "5"]);
  await low.until(/created the peering object.*kobunpeerings\.kobun\.dev\/p1\/shop/);
  using dev = operator(["-n", "p1", "--peering", "shop", "--dev"]);
  await low.until(/freezing: a peer with a higher priority is alive .*priority=666 ownPriority=5/);
  // "every replica announces itself (id, priority, lifetime) in a peering object"
  const both = await until(peeringPath("p1", "shop"), (o) => records(o).length === 2);
  expect(records(both).map((r) => r.priority).sort()).toEqual([5, 666]);
  for (const r of records(both)) expect([typeof r.lifetime, Date.parse(r.lastseen) > 0]).toEqual(["number", true]);
  await createConfigMap(sandbox, "while-dev", {}, "p1");
  await dev.until(/handled while-dev/);
  dev.child.kill("SIGTERM");
  expect(await dev.exited()).toBe(0);
  await low.until(/resuming: no peer with a higher or the same priority is alive/);
  expect(records(await until(peeringPath("p1", "shop"), (o) => records(o).length === 1))[0]!.priority).toBe(5);
  await createConfigMap(sandbox, "after-dev", {}, "p1");
  await low.until(/handled after-dev/);
  expect(low.output).not.toContain("started while-dev");
}, 30_000);

test("--dev: priority 666, peering whatever kobun.yaml says; with --priority or --standalone: exit 2", async () => {
  await namespace("d1");
  for (const extra of [["--priority", "5"], ["--standalone"]]) {
    const refused = await run("run", mod, "-n", "d1", "--dev", ...extra);
    expect([refused.code, refused.stderr]).toEqual([2, expect.stringContaining("--dev")]);
  }
  using dev = operator(["-n", "d1", "--dev", "--config", file("standalone.yaml", "peering: { standalone: true }\n")]);
  await dev.until(/created the peering object/);
  const object = await until(peeringPath("d1", "default"), (o) => records(o).length === 1);
  expect(records(object)[0]!.priority).toBe(666);
  expect(dev.output).not.toContain("peering is not in use");
}, 30_000);

test("kobun freeze: priority 100, handlers aborted, one ignoring it abandoned, nothing written; resume", async () => {
  await namespace("p3");
  using op = operator(["-n", "p3", ...PROBES]);
  const base = await probes(op);
  await op.until(/created the peering object/);
  await createConfigMap(sandbox, "polite-1", {}, "p3");
  await createConfigMap(sandbox, "rude-1", {}, "p3");
  await op.until(/started polite-1/), await op.until(/started rude-1/);
  const frozen = await run("freeze", "--peering", "default", "--lifetime", "600", "-n", "p3", "--message", "maint");
  expect([frozen.code, frozen.stdout.trim()]).toEqual([0, "frozen: peering default for 600s"]);
  await op.until(/freezing: a peer with a higher priority is alive .*priority=100 ownPriority=0.*message=maint/);
  const manual = records(await read(peeringPath("p3", "default"))).find((r) => r.priority === 100);
  expect(manual).toMatchObject({ lifetime: 600, message: "maint" });
  await op.until(/aborted polite-1/);                                 // "running ones see `signal` abort"
  expect((await fetch(`${base}/readyz`)).status).toBe(503);           // "/readyz is 503 while frozen"
  expect([await metric(base, 'kobun_frozen{scope="p3"}'), await metric(base, 'kobun_peers_seen{scope="p3"}')])
    .toEqual([1, 1]);
  await createConfigMap(sandbox, "during", {}, "p3");
  await op.until(/abandoned .*rude-1/);                               // past the 2 s grace, named in the log
  await op.until(/handled rude-1/);
  for (const name of ["polite-1", "rude-1"]) {                        // "(and nothing is written for them)"
    expect((await read(`/api/v1/namespaces/p3/configmaps/${name}`)).metadata.annotations).toBeUndefined();
  }
  expect(op.output).not.toContain("started during");                  // "no handler ... runs"
  const resumed = await run("resume", "--peering", "default", "-n", "p3");
  expect([resumed.code, resumed.stdout.trim()]).toEqual([0, "resumed: peering default"]);
  await op.until(/resuming/);
  await op.until(/handled during/);
  await op.until(/(started polite-1[\s\S]*){2}/);                      // the resume's fresh LIST runs it again
  expect((await fetch(`${base}/readyz`)).status).toBe(200);
  expect(await metric(base, 'kobun_frozen{scope="p3"}')).toBe(0);
}, 30_000);

// HEAD's docs/peering.md said "an operator running at 100 or more is not frozen by it" (false at 100); this asserts
// the working tree's rewording: above 100 not frozen, at 100 frozen unless a sharded replica.
test("kobun freeze at 100: above 100 not frozen, at 100 frozen, a sharded replica at 100 not frozen", async () => {
  const cases = [["p4a", ["--priority", "101"], "handled"], ["p4b", ["--priority", "100"], "conflict"],
    ["p4c", ["--priority", "100", "--replicas", "auto"], "handled"]] as const;
  for (const [ns, flags, outcome] of cases) {
    await namespace(ns);
    using op = operator(["-n", ns, ...flags]);
    await op.until(/created the peering object/);
    expect((await run("freeze", "--peering", "default", "--lifetime", "600", "-n", ns)).code).toBe(0);
    await until(peeringPath(ns, "default"), (o) => records(o).length === 2);
    await createConfigMap(sandbox, `at-${ns}`, {}, ns);
    expect([ns, (await op.until(new RegExp(`handled at-${ns}|freezing|conflict`)))[0]]).toEqual(
      [ns, outcome === "handled" ? `handled at-${ns}` : "conflict"]);
  }
}, 40_000);

test("kobun freeze/resume: --help, usage errors (2), --priority P and --dev recorded, CRDs missing (5)", async () => {
  await namespace("f1");
  const help = await kobun(["freeze", "--help"], { cwd: dir, env: env() });
  expect(help.code).toBe(0);
  const parts = ["--peering NAME --lifetime SECONDS", "[--priority P | --dev]", "[--message TEXT]",
    "[-n NS | --clusterwide]", "kobun resume --peering NAME", "--kubeconfig FILE"];
  for (const part of parts) expect(help.stdout).toContain(part);
  const usage = [await run("freeze", "--peering", "f", "-n", "f1"),
    await run("freeze", "--peering", "f", "-n", "f1", "--lifetime", "60", "--dev", "--priority", "5"),
    await run("resume", "--peering", "f"), await run("resume", "--peering", "f", "-n", "f1", "--clusterwide")];
  expect(usage.map((u) => u.code)).toEqual([2, 2, 2, 2]);
  expect(usage[3]!.stderr).toContain("give -n NAMESPACE or --clusterwide, not both");
  expect(usage[0]!.stderr).toContain("--lifetime");
  for (const [flags, priority] of [[["--priority", "7"], 7], [["--dev"], 666]] as const) {
    expect((await run("freeze", "--peering", "f", "--lifetime", "600", "-n", "f1", ...flags)).code).toBe(0);
    expect(records(await read(peeringPath("f1", "f"))).map((r) => r.priority)).toEqual([priority]);
  }
  expect((await run("resume", "--peering", "f", "-n", "f1")).code).toBe(0);
  expect(records(await read(peeringPath("f1", "f")))).toEqual([]);
  const kopf = await run("freeze", "--peering", "f", "--lifetime", "60", "-n", "f1", "--group", "kopf.dev");
  expect([kopf.code, kopf.stderr]).toEqual([5, expect.stringContaining("kopfpeerings.kopf.dev is not served")]);
}, 30_000);

test("kobun freeze --group outside kobun.dev|kopf.dev: a flag value that fails validation (exit 3)", async () => {
  const bad = await run("freeze", "--peering", "f", "--lifetime", "60", "-n", "f1", "--group", "foo.dev");
  // README "Exit codes" (3: "a flag value failed validation") and the help's `--group kobun.dev|kopf.dev`, as
  // peering.group: foo.dev in kobun.yaml is (it once went to the API server and exited 5, "not served").
  expect([bad.code, bad.stderr]).toEqual([3, expect.stringContaining('--group: expected "kobun.dev" or "kopf.dev"')]);
}, 30_000);

test("a namespace's own peering object freezes it apart; frozen-is-ready; freeze ends after --lifetime", async () => {
  await namespace("q1"), await namespace("q2");
  const ready = file("ready.yaml", "probes: { readiness: frozen-is-ready }\n");
  using op = operator(["-n", "q1", "-n", "q2", "--config", ready, ...PROBES]);
  const base = await probes(op);
  await op.until(/operator ready/);
  expect((await run("freeze", "--peering", "default", "--lifetime", "5", "-n", "q1")).code).toBe(0);
  await op.until(/freezing: .*peering=kobunpeerings\.kobun\.dev\/q1\/default/);
  await createConfigMap(sandbox, "a-obj", {}, "q1");
  await createConfigMap(sandbox, "b-obj", {}, "q2");
  await op.until(/handled b-obj/);
  expect([await metric(base, 'kobun_frozen{scope="q1"}'), await metric(base, 'kobun_frozen{scope="q2"}')])
    .toEqual([1, 0]);
  expect((await fetch(`${base}/readyz`)).status).toBe(200);
  expect(op.output).not.toContain("started a-obj");
  await op.until(/resuming: .*q1\/default/, 20_000);                   // the 5 s window is over
  await op.until(/handled a-obj/);
}, 30_000);

test("--standalone: no peering object of its own, and kobun freeze does not freeze it", async () => {
  await namespace("s1");
  using op = operator(["-n", "s1", "--standalone"]);
  await op.until(/operator ready/);
  expect((await fetch(`${sandbox.url}${peeringPath("s1", "default")}`)).status).toBe(404);
  expect((await run("freeze", "--peering", "default", "--lifetime", "600", "-n", "s1")).code).toBe(0);
  expect(records(await read(peeringPath("s1", "default"))).map((r) => r.priority)).toEqual([100]);
  await createConfigMap(sandbox, "alone", {}, "s1");
  expect((await op.until(/handled alone|freezing/))[0]).toBe("handled alone");
}, 30_000);

test("mode lease: one Lease in $POD_NAMESPACE, one replica active, the standby takes over when it leaves", async () => {
  await namespace("l1");
  const lease = file("lease.yaml", "peering: { mode: lease }\n");
  using a = operator(["-n", "l1", "--config", lease], { POD_NAMESPACE: "l1" });
  await a.until(/acquired the lease: this replica is active/);
  using b = operator(["-n", "l1", "--config", lease], { POD_NAMESPACE: "l1" });
  await b.until(/standing by: the lease is held by another replica/);
  const leases = (await read("/apis/coordination.k8s.io/v1/namespaces/l1/leases")).items;
  expect(leases.map((l: any) => Boolean(l.spec.holderIdentity))).toEqual([true]);
  await createConfigMap(sandbox, "lz-1", {}, "l1");
  await a.until(/handled lz-1/);
  a.child.kill("SIGTERM");
  expect(await a.exited()).toBe(0);
  await b.until(/acquired the lease: this replica is active/);
  await createConfigMap(sandbox, "lz-2", {}, "l1");
  await b.until(/handled lz-2/);
  expect(b.output).not.toContain("started lz-1");
}, 30_000);

test("exit 3: sharding with mode lease; renewDeadline + freezeGracePeriod not below duration", async () => {
  const lease = file("lease2.yaml", "peering: { mode: lease }\n");
  const both = await run("run", mod, "-n", "default", "--replicas", "2", "--config", lease);
  expect([both.code, both.stderr]).toEqual([3, expect.stringContaining("sharding")]);
  const slow = file("slow.yaml",
    "peering: { mode: lease, lease: { duration: 10s, renewDeadline: 9s, retryPeriod: 2s } }\n");
  const timings = await run("run", mod, "-n", "default", "--config", slow);
  expect([timings.code, timings.stderr]).toEqual([3, expect.stringContaining("freezeGracePeriod")]);
}, 30_000);

test("sharding: Leases kobun-<peering>-shard-<i> and one per replica in $POD_NAMESPACE; each object once", async () => {
  await namespace("sa"), await namespace("ops");
  const flags = ["-n", "sa", "--replicas", "2", "--shards", "4", "--peering", "blue"];
  using a = operator(flags, { POD_NAMESPACE: "ops" });
  await a.until(/(acquired a shard[\s\S]*){4}/);
  using b = operator(flags, { POD_NAMESPACE: "ops" });
  await b.until(/(acquired a shard[\s\S]*){2}/), await a.until(/(released a shard[\s\S]*){2}/);
  const leases = (await read("/apis/coordination.k8s.io/v1/namespaces/ops/leases")).items;
  const shards = leases.filter((l: any) => /^kobun-blue-shard-\d$/.test(l.metadata.name));
  expect(shards.map((l: any) => l.metadata.name).sort()).toEqual([0, 1, 2, 3].map((i) => `kobun-blue-shard-${i}`));
  expect(leases.length).toBe(6);                                     // + "a membership Lease per replica"
  const holders = shards.map((l: any) => l.spec.holderIdentity);
  expect(new Set(holders).size).toBe(2);
  expect(holders.filter((h: string) => h === holders[0]).length).toBe(2);
  const names = Array.from({ length: 8 }, (_, i) => `sh-${i}`);
  for (const name of names) await createConfigMap(sandbox, name, {}, "sa");
  for (const name of names) await anyOf([a, b], new RegExp(`handled ${name}\\b`));
  expect(names.map((n) => count(a.output + b.output, new RegExp(`started ${n}\\b`)))).toEqual(names.map(() => 1));
  // "a peer of higher priority (`kobun freeze`, a `--dev` operator) still freezes them all"
  expect((await run("freeze", "--peering", "blue", "--lifetime", "600", "-n", "sa")).code).toBe(0);
  await a.until(/freezing: a peer/), await b.until(/freezing: a peer/);
  await createConfigMap(sandbox, "sh-frozen", {}, "sa");
  expect((await run("resume", "--peering", "blue", "-n", "sa")).code).toBe(0);
  await anyOf([a, b], /handled sh-frozen/);
  expect(count(a.output + b.output, /started sh-frozen/)).toBe(1);
}, 30_000);

test("sharding handover: a shard given up aborts its handlers, run again on the new owner after; SIGKILL", async () => {
  await namespace("hz");
  const short = file("short.yaml",
    "peering: { freezeGracePeriod: 1s, lease: { duration: 4s, renewDeadline: 2s, retryPeriod: 500ms } }\n");
  const flags = ["-n", "hz", "--replicas", "auto", "--shards", "2", "--config", short];
  using a = operator(flags, { HOLD: "1" });
  await a.until(/(acquired a shard[\s\S]*){2}/);
  const names = Array.from({ length: 12 }, (_, i) => `ho-${i}`);
  for (const name of names) await createConfigMap(sandbox, name, {}, "hz");
  await a.until(/(started ho-[\s\S]*){12}/);
  using b = operator(flags);
  await b.until(/acquired a shard/), await a.until(/released a shard/);
  const aborted = [...a.output.matchAll(/aborted (ho-\d+)\b/g)].map((m) => m[1]!);
  expect(aborted.length).toBeGreaterThan(0);
  expect(aborted.length).toBeLessThan(names.length);
  for (const name of aborted) {
    await b.until(new RegExp(`handled ${name}\\b`));
    // "no object is ever in two replicas' handlers at once"
    expect(time(b, `started ${name}\\b`)).toBeGreaterThanOrEqual(time(a, `aborted ${name}\\b`));
  }
  const kept = names.filter((n) => !aborted.includes(n));
  expect(kept.filter((n) => new RegExp(`started ${n}\\b`).test(b.output))).toEqual([]);
  b.kill();                                                          // no goodbye: its shard's Lease has to expire
  await a.until(/(acquired a shard[\s\S]*){3}/, 20_000);
  await createConfigMap(sandbox, "ho-late", {}, "hz");
  await a.until(/started ho-late/);
}, 40_000);

test("kobun manifests --replicas: peering CRDs, Role <name>-lease, replicas (auto: 2), PDB; --standalone", async () => {
  const docs = async (...flags: string[]) => {
    const out = await kobun(["manifests", mod, "-n", "pa", "--name", "shop", ...flags], { cwd: dir, env: env() });
    expect(out.code).toBe(0);
    return (Bun.YAML.parse(out.stdout) as any[]).filter(Boolean);
  };
  const auto = await docs("--replicas", "auto");
  const names = (kind: string) => auto.filter((d) => d.kind === kind).map((d) => d.metadata.name);
  expect(names("CustomResourceDefinition")).toEqual(expect.arrayContaining(
    ["kobunpeerings.kobun.dev", "clusterkobunpeerings.kobun.dev"]));
  expect(names("Role")).toContain("shop-lease");
  expect(auto.find((d) => d.kind === "Deployment").spec.replicas).toBe(2);
  expect(auto.find((d) => d.kind === "PodDisruptionBudget").spec.maxUnavailable).toBe(1);
  expect((await docs("--replicas", "3")).find((d) => d.kind === "Deployment").spec.replicas).toBe(3);
  expect((await docs("--standalone")).filter((d) => /peering/i.test(d.metadata?.name ?? ""))).toEqual([]);
}, 30_000);
