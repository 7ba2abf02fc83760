// What a Kopf user porting an operator relies on (docs/from-kopf.md, handlers.md, peering.md, api.md's Activity*,
// Login*, HandlerOptions, FieldOptions, EventOptions): startup before any watch, its retries, timeout, errors and
// exit 6, cleanup; retry delays, failures kept in the status; on.field's `value` and diffs; on.login; peering: a
// higher-priority peer (an operator, `kobun freeze`, a Kopf record) freezes this one until it leaves or expires,
// `--standalone` not. startOperator() is always standalone, so peers are run() on its sandbox.

import { expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Type from "typebox";
import {
  defineResource, FatalError, Logger, memorySink, now, PermanentError, Registry, resolveSettings, run, TemporaryError,
  type RunOptions,
} from "kobun";
import { startOperator } from "kobun/testing";
import { root, scratchDir, within } from "./helpers.ts";

const [spec, status] = [Type.Object({ mode: Type.Optional(Type.String()) }), Type.Record(Type.String(), Type.Any())];
const Things = () => defineResource({ group: "parity.blackbox.kobun.dev", kind: "Thing", plural: "things",
  schema: { spec, status } });
const peeringCrds = [join(root, "crds", "peering-kobun.dev.yaml")];
const quiet = { logLevel: "silent", timeout: 15_000 } as const;
const reject = (started: Promise<unknown>) => started.then(() => undefined, (e: unknown) => e as Error);
const failures = (o: { status?: Record<string, unknown> }) => JSON.stringify(o.status?.kobun ?? {});

/** Another operator, run() on a kit's sandbox in namespace default: ready, its log, and a stop that awaits it. */
function operate(flags: Record<string, unknown>, registry: Registry, opts: Partial<RunOptions> = {}) {
  const [stop, logs, { promise: ready, resolve }] = [new AbortController(), memorySink("debug", "plain"),
    Promise.withResolvers<void>()];
  const settings = resolveSettings({ flags: { namespaces: ["default"], ...flags } as never });
  const running = run({ signal: stop.signal, settings, registry, logger: new Logger(logs), onReady: () => resolve(),
    ...opts });
  running.catch(() => {});
  const started = within(Promise.race([ready, running.then(() => { throw new Error("run() ended"); })]), 15_000,
    "the operator ready");
  return { started, logs, stop: async () => { stop.abort(); await within(running, 15_000, "the operator to stop"); } };
}
const peer = (kubeconfig: string, priority: number, registry: Registry, peerId?: string, config?: string) =>
  operate({ kubeconfig, priority, peering: "default", ...config ? { config } : {} }, registry,
    peerId ? { peerId } : {});
function marker(who: string, registry = new Registry()) {
  registry.on.create("v1/configmaps", ({ patch }) => { patch.metadata.labels = { by: who }; }, { id: "mark" });
  return registry;
}
const sandboxOnly = (crds = peeringCrds) => startOperator({ registry: new Registry(), crds, ...quiet });

test("on.startup runs before any watch: what it makes is `listed`, its memo reaches handlers, cleanup's", async () => {
  const [registry, seen] = [new Registry(), [] as string[]];
  let cleaned: unknown;
  registry.on.index("v1/configmaps", ({ name }) => ({ [name]: true }), { id: "names" });
  registry.on.startup(async ({ api, memo, indexes }) => {
    seen.push(`startup: ${indexes.names?.size ?? 0} indexed`);
    await api.create({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "early", namespace: "default" } });
    memo.token = "from-startup";
  }, { id: "prepare" });
  const log = (prefix: string) => ({ type, name }: { type: string; name: string }) =>
    void (name.startsWith("kube-") || seen.push(`${prefix}${type} ${name}`));
  registry.on.event("v1/configmaps", log(""), { id: "all" });
  registry.on.event("v1/configmaps", log("x: "), { id: "x", field: "data.kind", value: "x" });
  registry.on.create("v1/configmaps", ({ memo, patch }) => { patch.metadata.labels = { token: memo.token }; });
  registry.on.cleanup(({ memo, indexes: { names }, signal }) => {
    cleaned = { token: memo.token, early: names?.has("early"), late: names?.has("late"), aborted: signal.aborted };
  }, { id: "bye" });
  const kit = await startOperator({ registry, ...quiet });
  try {
    await kit.apply("v1/configmaps", { metadata: { name: "late" }, data: { kind: "x" } });
    for (const name of ["early", "late"]) await kit.until("v1/configmaps", name, (o) => o.metadata.labels?.token);
    expect((await kit.get("v1/configmaps", "early"))?.metadata.labels?.token).toBe("from-startup");
    expect(seen.slice(0, 2)).toEqual(["startup: 0 indexed", "listed early"]);
    expect(seen.filter((line) => line.includes("late"))).toEqual(["added late", "x: added late"]);
  } finally {
    await kit.stop();
  }
  expect(cleaned).toEqual({ token: "from-startup", early: true, late: true, aborted: false });
}, 30_000);

test("on.startup: an Error waits the default 60 s backoff; past `timeout` the operator fails (exit 6)", async () => {
  const [registry, attempts, starts] = [new Registry(), [] as number[], new Set<number>()];
  let [events, t0] = [0, 0];
  registry.on.startup(({ retry, started }) => {
    if (retry === 0) t0 = now().getTime();
    attempts.push((now().getTime() - t0) / 1000);
    starts.add(started.getTime());
    throw new Error("the vault is sealed");
  }, { id: "unseal", timeout: 100 });
  registry.on.event("v1/configmaps", () => { events++; });
  const error = await reject(startOperator({ registry, clock: "virtual", ...quiet }));
  expect(error?.message).toMatch(/unseal/);
  expect((error?.cause as FatalError)?.exitCode).toBe(6);
  expect(attempts).toEqual([0, 60]);                  // the third, due at 120 s, is past the 100 s timeout
  expect(starts.size).toBe(1);                        // ctx.started is the first attempt's, every time
  expect(events).toBe(0);                             // no watch was opened
}, 30_000);

test("on.startup errors: \"permanent\" stops at once; \"ignored\" goes on to the next startup", async () => {
  const [strict, lenient, order] = [new Registry(), new Registry(), [] as string[]];
  let strictCalls = 0;
  strict.on.startup(() => { strictCalls++; throw new Error("no config"); }, { id: "strict", errors: "permanent" });
  strict.on.event("v1/configmaps", () => {});
  expect(((await reject(startOperator({ registry: strict, ...quiet })))?.cause as FatalError)?.exitCode).toBe(6);
  expect(strictCalls).toBe(1);
  lenient.on.startup(({ memo }) => { memo.first = "ran"; order.push("first"); throw new Error("meh"); },
    { id: "first", errors: "ignored" });
  lenient.on.startup(({ memo }) => { order.push(`second saw ${memo.first}`); }, { id: "second" });
  lenient.on.event("v1/configmaps", () => {});
  await using kit = await startOperator({ registry: lenient, ...quiet });
  expect(order).toEqual(["first", "second saw ran"]);
  await kit.logs.until("Activity 'second' succeeded.");
}, 30_000);

test("retry delays: TemporaryError's, else `backoff`; every failure for good stays in the status", async () => {
  const [Things_, registry, attempts, once] = [Things(), new Registry(), [] as number[], { permanent: 0, strict: 0 }];
  let t0 = 0;
  registry.on.create(Things_, ({ retry }) => {
    if (retry === 0) t0 = now().getTime();
    attempts.push((now().getTime() - t0) / 1000);
    if (retry === 0) throw new TemporaryError("soon", { delay: 5 });
    if (retry === 1) throw new TemporaryError("no delay given");
    throw new Error("plain");
  }, { id: "flaky", backoff: 30, retries: 3 });
  registry.on.create(Things_, () => { once.permanent++; throw new PermanentError("Size must be set."); },
    { id: "create_fn", backoff: 1 });
  registry.on.create(Things_, () => { once.strict++; throw new Error("bad mode"); },
    { id: "strict", errors: "permanent", backoff: 1 });
  await using kit = await startOperator({ registry, clock: "virtual", ...quiet });
  await kit.apply(Things_, { metadata: { name: "r" }, spec: {} });
  await kit.logs.until("Handler 'flaky' failed temporarily");
  for (const [seconds, expected] of [[4, [0]], [1, [0, 5]], [29, [0, 5]], [1, [0, 5, 35]]] as const) {
    await kit.advance(seconds);
    expect(attempts).toEqual([...expected]);
  }
  const failed = await kit.until(Things_, "r", (o) => failures(o).includes("time(s)"));
  for (const why of ["failed 3 time(s)", "Size must be set.", "bad mode"]) expect(failures(failed)).toContain(why);
  expect(Object.keys(failed.status ?? {})).toEqual(["kobun"]);      // no result for any of them
  await kit.advance(120);
  expect([attempts.length, once.permanent, once.strict]).toEqual([3, 1, 1]);
}, 30_000);

test("on.field { value }: runs when the field reaches or leaves the value, not between other values", async () => {
  const [Things_, registry, calls] = [Things(), new Registry(), [] as unknown[]];
  registry.on.field(Things_, { id: "fast", field: "spec.mode", value: "fast" }, (c) => void calls.push([c.old, c.new]));
  registry.on.field(Things_, { id: "seen", field: "spec.mode" }, ({ new: now }) => ({ mode: now }));
  await using kit = await startOperator({ registry, ...quiet });
  for (const mode of ["slow", "fast", "turbo", "slow"]) {
    await kit.apply(Things_, { metadata: { name: "v" }, spec: { mode } });
    await kit.until(Things_, "v", (o) => (o.status?.seen as { mode?: string } | undefined)?.mode === mode);
  }
  expect(calls).toEqual([["slow", "fast"], ["fast", "turbo"]]);
}, 30_000);

test("on.field on metadata.labels: old/new are the labels, diff paths label keys (from-kopf's relabel)", async () => {
  const [Things_, registry, calls] = [Things(), new Registry(), [] as unknown[]];
  registry.on.field(Things_, { id: "relabel", field: "metadata.labels" }, ({ old, new: now, diff }) => {
    calls.push({ old, now, diff: diff.map(({ op, path, old: o, new: n }) => [op, path, o, n]) });
    return { n: calls.length };
  });
  await using kit = await startOperator({ registry, ...quiet });
  for (const [i, labels] of ([{ a: "1" }, { a: "2", b: "x" }, { a: "2" }] as Record<string, string>[]).entries()) {
    await kit.apply(Things_, { metadata: { name: "l", labels }, spec: {} });
    await kit.until(Things_, "l", (o) => (o.status?.relabel as { n?: number } | undefined)?.n === i + 1);
  }
  expect(calls).toEqual([
    { old: undefined, now: { a: "1" }, diff: [["add", [], undefined, { a: "1" }]] },
    { old: { a: "1" }, now: { a: "2", b: "x" }, diff: [["change", ["a"], "1", "2"], ["add", ["b"], undefined, "x"]] },
    { old: { a: "2", b: "x" }, now: { a: "2" }, diff: [["remove", ["b"], "x", undefined]] },
  ]);
}, 30_000);

test("on.login: its credentials are used (not --kubeconfig's), renewal false at start; a throw: exit 6", async () => {
  await using kit = await startOperator({ registry: new Registry(), ...quiet });
  const kubeconfig = await Bun.file(kit.kubeconfigPath).text();
  const server = kubeconfig.match(/server: (\S+)/)![1]!;
  const dir = scratchDir();
  const nowhere = join(dir, "nowhere.kubeconfig");                  // 127.0.0.1:1: nothing listens there
  writeFileSync(nowhere, kubeconfig.replace(server, "http://127.0.0.1:1"));
  const [registry, logins] = [new Registry(), [] as unknown[]];
  registry.on.login(({ renewal, memo }) => { logins.push({ renewal, region: memo.region }); return { server }; });
  registry.on.create("v1/secrets", ({ patch }) => { patch.metadata.labels = { via: "login" }; }, { id: "mark" });
  const operator = operate({ kubeconfig: nowhere, standalone: true }, registry, { memo: { region: "eu" } });
  try {
    await operator.started;
    await kit.apply("v1/secrets", { metadata: { name: "s" }, stringData: { a: "b" } });
    await kit.until("v1/secrets", "s", (o) => o.metadata.labels?.via === "login");
    expect(logins[0]).toEqual({ renewal: false, region: "eu" });
  } finally {
    await operator.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const failing = new Registry();
  failing.on.login(function vaultLogin() { throw new Error("vault unreachable"); });
  failing.on.event("v1/configmaps", () => {});
  const error = await reject(startOperator({ registry: failing, ...quiet }));
  expect(error?.message).toMatch(/vaultLogin/);
  expect((error?.cause as FatalError)?.exitCode).toBe(6);
}, 30_000);

test("peering: a higher-priority peer freezes this operator; it resumes when the peer exits", async () => {
  await using kit = await sandboxOnly();
  const low = peer(kit.kubeconfigPath, 0, marker("low"), "low");
  try {
    await low.started;
    await kit.apply("v1/configmaps", { metadata: { name: "before" } });
    await kit.until("v1/configmaps", "before", (o) => o.metadata.labels?.by === "low");  // active while alone
    const high = peer(kit.kubeconfigPath, 100, marker("high"), "high");
    await high.started;
    await low.logs.until(/freezing.*peer=high/, { timeout: 15_000 });
    await kit.apply("v1/configmaps", { metadata: { name: "during" } });
    await kit.until("v1/configmaps", "during", (o) => o.metadata.labels?.by);
    await kit.consistently("v1/configmaps", "during", (o) => o?.metadata.labels?.by === "high", { for: 300 });
    await high.stop();
    await kit.apply("v1/configmaps", { metadata: { name: "after" } });
    await kit.until("v1/configmaps", "after", (o) => o.metadata.labels?.by === "low", { timeout: 15_000 });
  } finally {
    await low.stop();
  }
}, 60_000);

async function kobun(kubeconfig: string, ...args: string[]) {       // async: the sandbox runs in this process
  const proc = Bun.spawn(["bun", join(root, "bin", "kobun.js"), ...args, "--kubeconfig", kubeconfig],
    { cwd: root, stdout: "pipe", stderr: "pipe", timeout: 15_000 });
  const out = `${await new Response(proc.stdout).text()}${await new Response(proc.stderr).text()}`;
  return { code: await proc.exited, out };
}
const freezeArgs = ["--peering", "default", "--lifetime", "600", "-n", "default"];

test("`kobun freeze`: a running handler's signal aborts, nothing written for it; `kobun resume` ends it", async () => {
  await using kit = await sandboxOnly();
  const [registry, calls] = [marker("low"), [] as string[]];
  const { promise: running, resolve: entered } = Promise.withResolvers<void>();
  registry.on.create("v1/secrets", async ({ signal, patch }) => {
    calls.push("called");
    if (calls.length > 1) { patch.metadata.labels = { by: "second-call" }; return; }
    entered();
    await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
    calls.push("aborted");
    patch.metadata.labels = { by: "aborted-call" };
  }, { id: "slow" });
  const low = peer(kit.kubeconfigPath, 0, registry, "low");
  try {
    await low.started;
    await kit.apply("v1/secrets", { metadata: { name: "busy" }, stringData: { a: "b" } });
    await within(running, 15_000, "the slow handler to start");
    expect(await kobun(kit.kubeconfigPath, "freeze", ...freezeArgs, "--priority", "100")).toMatchObject({ code: 0 });
    await low.logs.until(/freezing/, { timeout: 15_000 });
    await kit.apply("v1/configmaps", { metadata: { name: "held" } });
    await kit.consistently("v1/configmaps", "held", (o) => !o?.metadata.labels?.by, { for: 500 });
    expect(calls).toEqual(["called", "aborted"]);
    expect((await kit.get("v1/secrets", "busy"))?.metadata.labels?.by).toBeUndefined();
    const resume = await kobun(kit.kubeconfigPath, "resume", "--peering", "default", "-n", "default");
    expect(resume).toMatchObject({ code: 0 });
    await kit.until("v1/configmaps", "held", (o) => o.metadata.labels?.by === "low", { timeout: 15_000 });
    await kit.until("v1/secrets", "busy", (o) => o.metadata.labels?.by === "second-call");
  } finally {
    await low.stop();
  }
}, 60_000);

test("two run() in one process with default peer ids: the higher-priority one freezes the lower", async () => {
  await using kit = await sandboxOnly();
  const low = peer(kit.kubeconfigPath, 0, marker("low"));
  const high = peer(kit.kubeconfigPath, 100, marker("high"));
  try {
    low.started.catch(() => {}); // it may freeze before it is ready, and is stopped so: its log says it froze
    await high.started;
    await low.logs.until(/freezing/, { timeout: 15_000 });
  } finally {
    await Promise.all([low.stop(), high.stop()]);
  }
}, 30_000);

test("peering.group kopf.dev: a Kopf peer's record freezes this operator until its lifetime passes", async () => {
  await using kit = await sandboxOnly([join(root, "crds", "peering-kopf.dev.yaml")]);
  const dir = scratchDir();
  writeFileSync(join(dir, "kobun.yaml"), "peering:\n  group: kopf.dev\n");
  const low = peer(kit.kubeconfigPath, 0, marker("low"), "low", join(dir, "kobun.yaml"));
  try {
    await low.started;
    const lastseen = new Date().toISOString().replace("Z", "000");    // as Kopf writes it: naive UTC, microseconds
    await kit.apply("kopfpeerings.kopf.dev/v1",
      { metadata: { name: "default" }, status: { "kopf@laptop": { priority: 100, lifetime: 3, lastseen } } });
    await low.logs.until(/freezing/, { timeout: 15_000 });
    await kit.apply("v1/configmaps", { metadata: { name: "held" } });
    await kit.consistently("v1/configmaps", "held", (o) => !o?.metadata.labels?.by, { for: 300 });
    await kit.until("v1/configmaps", "held", (o) => o.metadata.labels?.by === "low", { timeout: 15_000 });
  } finally {
    await low.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);

test("--standalone: a live higher-priority peer (`kobun freeze --dev`) freezes nothing", async () => {
  await using kit = await startOperator({ registry: marker("alone"), crds: peeringCrds, ...quiet });
  expect(await kobun(kit.kubeconfigPath, "freeze", ...freezeArgs, "--dev")).toMatchObject({ code: 0 });
  const peering = await kit.until("kobunpeerings.kobun.dev/v1", "default", (o) => Object.keys(o.status ?? {}).length);
  expect(Object.values(peering.status as Record<string, { priority: number }>)[0]?.priority).toBe(666);
  await kit.apply("v1/configmaps", { metadata: { name: "free" } });
  await kit.until("v1/configmaps", "free", (o) => o.metadata.labels?.by === "alone");
}, 45_000);
