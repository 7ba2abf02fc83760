// docs/indexes.md, handlers.md (ctx, memo, patch, logger, Events), api.md's Index and ObjectContext, the README's
// `kobun generate types` and `kobun docs`, as a user meets them: the guides' examples run as written by `kobun run`
// against a sandbox, the rest by kobun/testing. What other docs-blackbox files test is not repeated here.

import { afterAll, expect, test } from "bun:test";
import { cpSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Registry, resource, type Index, type IndexKey } from "kobun";
import { startSandbox } from "kobun/sandbox";
import { startOperator } from "kobun/testing";
import { cli, finish, handlerModule, kobun, kubeconfigFile, root, Running, scratchDir, userEnv, within }
  from "../firstday-blackbox/helpers.ts";

const [KEX, CRD] = ["kobunexamples.kobun.dev/v1", join(root, "handlers", "kobunexample.crd.yaml")];
const quiet = { logLevel: "silent", timeout: 20_000 } as const;
const dir = scratchDir();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The `n`th ```ts block of docs/`guide`, as a user copies it. */
const snippet = (guide: string, n: number) =>
  [...readFileSync(join(root, "docs", guide), "utf8").matchAll(/^```ts\n([\s\S]*?)^```$/gm)][n]![1]!;
/** A sandbox with the KobunExample CRD and namespace ns1, and no operator of its own: `kobun run` is the one. */
const cluster = () => startOperator({ registry: new Registry(), ...quiet, crds: [CRD], namespace: "ns1" });
const run = (kit: { kubeconfigPath: string }, guide: string, n: number) => new Running([process.execPath, cli, "run",
  handlerModule(dir, `${guide}-${n}.ts`, snippet(guide, n)), "--kubeconfig", kit.kubeconfigPath, "-n", "ns1",
  "--standalone"], { env: userEnv({ HOME: dir }) });
type Kit = Awaited<ReturnType<typeof startOperator>>;
const cm = (kit: Kit, name: string, data: Record<string, string> = {}, labels: Record<string, string> = {}) =>
  kit.apply("v1/configmaps", { metadata: { name, labels }, data });

test("indexes.md's examples as written, by `kobun run`: a metadata-only Pods index, a tuple-keyed one", async () => {
  await using kit = await cluster();
  const [spec, pods] = [{ containers: [{ name: "c", image: "x" }] }, { "web-1": "web", "web-2": "web", "db-1": "db" }];
  for (const [name, app] of Object.entries({ ...pods, plain: "" })) {
    await kit.apply("v1/pods", { metadata: { name, labels: app ? { app } : {} }, spec });
  }
  await kit.patchStatus("v1/pods", "web-1", { phase: "Running" });
  await kit.apply(KEX, { metadata: { name: "ex" }, spec: { app: "web", pod: "web-1" } });
  let op = run(kit, "indexes.md", 0);
  try {
    await op.until(/watching metadata-only resource=pods/);
    const { count } = (await kit.until(KEX, "ex", (o) => o.status?.count)).status!;
    expect({ ...count, apps: count.apps.sort() }).toEqual({ pods: 2, apps: ["db", "web"], total: 2, known: true });
    op.kill(); op = run(kit, "indexes.md", 1);
    expect((await kit.until(KEX, "ex", (o) => o.status?.watchPod)).status?.watchPod).toEqual({ phase: "Running" });
  } finally {
    op.kill();
  }
}, 60_000);

test("handlers.md's first and Events examples as written: patch, logger, diff, resume, delete, Events", async () => {
  await using kit = await cluster();
  let op = run(kit, "handlers.md", 0);
  try {
    await kit.apply(KEX, { metadata: { name: "ex" }, spec: { size: 5 } });
    const made = await kit.until(KEX, "ex", (o) => o.status?.create_fn);
    expect(made.status).toMatchObject({ phase: "Ready", create_fn: { message: "hello ex" } });
    await op.until(/INFO +created .*namespace=ns1 name=ex .*size=5/);     // the object's fields, then the line's
    await kit.apply(KEX, { metadata: { name: "ex" }, spec: { size: 6 } });
    const updated = await kit.until(KEX, "ex", (o) => o.status?.update_fn);
    expect(updated.status?.update_fn).toEqual({ changed: ["change spec.size"], was: 5, is: 6 });
    op.child.kill("SIGTERM"); expect(await op.exited()).toBe(0);           // then again: the object is resumed
    op = run(kit, "handlers.md", 0);
    await op.until(/ex seen again after a restart .*name=ex/);
    await kit.delete(KEX, "ex"); await kit.gone(KEX, "ex");
    await op.until(/bye ex .*handler=delete_fn/);
    op.kill(); op = run(kit, "handlers.md", 1);
    const ev = await kit.apply(KEX, { metadata: { name: "ev" }, spec: { size: 150, config: "{bad" } });
    await kit.until(KEX, "ev", (o) => o.status?.kobun);                 // the last handled state an update needs
    await kit.apply(KEX, { metadata: { name: "ev" }, spec: { size: 151, config: "{bad" } });
    const events = await kit.events(ev, { until: (list) => list.length >= 5 });
    const parseError = (() => { try { JSON.parse("{bad"); } catch (error) { return (error as Error).message; } })();
    expect(events.map((e) => [e.type, e.reason, e.message ?? ""]).sort()).toEqual([["Audit", "Changed",
      "by the update handler"], ["Normal", "Logging", "Handler 'tell' succeeded."], ["Normal", "Resized", "now 151"],
      ["Warning", "Large", ""], ["Warning", "SyntaxError", `spec.config: ${parseError}`]]);
  } finally {
    op.kill();
  }
}, 60_000);

test("ctx: the object's fields, status {}, resource, cause, retry, started; patch null deletes; index keys by value",
  async () => {
    const [registry, seen] = [new Registry(), [] as unknown[]];
    registry.on.index("v1/configmaps", ({ name }) =>
      new Map<IndexKey, string>([[true, name], [null, name], [["a", [1, false]], name]]), { id: "odd" });
    registry.on.create("v1/configmaps", (ctx) => {
      const { body, resource: r, indexes: { odd } } = ctx;              // its own event is in them already
      seen.push({ status: ctx.status, uid: ctx.uid === body.metadata.uid, meta: ctx.meta === body.metadata,
        at: [ctx.namespace, ctx.name], labels: ctx.labels, annotations: ctx.annotations, reason: ctx.reason,
        resource: [r.group, r.version, r.plural, r.kind, r.namespaced], retry: ctx.retry, aborted: ctx.signal.aborted,
        started: ctx.started instanceof Date, runtime: ctx.runtime >= 0, diffUnavailable: ctx.diffUnavailable,
        keys: [odd!.get(true), odd!.get("true"), odd!.get(null), odd!.get("null"), odd!.get(["a", [1, false]]),
          odd!.get(["a", [1, "false"]]), [...odd!.keys()]] });
      Object.assign(ctx.patch, { metadata: { labels: { drop: null, kept: "yes" } }, data: { gone: null, added: "1" } });
    }, { id: "look" });
    await using kit = await startOperator({ registry, ...quiet });
    await cm(kit, "k", { gone: "1", stay: "2" }, { drop: "x" });
    const done = await kit.until("v1/configmaps", "k", (o) => o.metadata.labels?.kept);
    expect([done.metadata.labels, done.data]).toEqual([{ kept: "yes" }, { stay: "2", added: "1" }]);
    expect(seen).toEqual([{ status: {}, uid: true, meta: true, at: ["default", "k"], labels: { drop: "x" },
      annotations: {}, reason: "create", resource: ["", "v1", "configmaps", "ConfigMap", true], retry: 0,
      aborted: false, started: true, runtime: true, diffUnavailable: false,
      keys: [["k"], [], ["k"], [], ["k"], [], [true, null, ["a", [1, false]]]] }]);
  }, 30_000);

test("an index is updated before its event's handlers; a bad key or a metadata-only spec read is named", async () => {
  const [registry, seen, arrived] = [new Registry(), [] as unknown[], [0, 1, 2, 3].map(() => Promise.withResolvers())];
  registry.on.index("v1/configmaps", ({ name, body }) =>
    body.data?.bad ? [[{ bad: true } as never, name]] : { [body.data?.color ?? "none"]: name }, { id: "byColor" });
  // Cast: reading a metadata-only spec does not compile; the runtime's error is what is tested.
  registry.on.index(resource("v1/secrets", { metadataOnly: true }),
    ({ name, spec }) => ({ [String((spec as Record<string, unknown>).x)]: name }), { id: "secretX" });
  registry.on.event("v1/configmaps", ({ type, name, body, indexes }) => {
    const keys = [...indexes.byColor!].filter(([, names]) => names.includes(name)).map(([key]) => key);
    arrived[seen.push([type, name, body.data?.color ?? null, keys]) - 1]?.resolve();
  }, { id: "watcher" });
  await using kit = await startOperator({ registry, ...quiet });
  const steps = [() => cm(kit, "a", { color: "red" }), () => cm(kit, "a", { color: "blue" }),
    () => kit.delete("v1/configmaps", "a"), () => cm(kit, "o", { bad: "yes" })];
  for (const [n, step] of steps.entries()) await step().then(() => within(arrived[n]!.promise, 15_000, `event ${n}`));
  expect(seen).toEqual([["added", "a", "red", ["red"]], ["modified", "a", "blue", ["blue"]],
    ["deleted", "a", "blue", []], ["added", "o", null, []]]);
  expect(await kit.logs.until(/index fn failed/)).toMatch(/index=byColor .*name=o .*got an object/);
  await kit.apply("v1/secrets", { metadata: { name: "s" }, type: "Opaque" });
  expect(await kit.logs.until(/index fn failed.*index=secretX/)).toMatch(/name=s .*ctx\.spec\.x: .*metadata-only/);
}, 30_000);

test("a relist (410) replaces an index's entries; ctx.cache.list's index takes the same tuple keys", async () => {
  const registry = new Registry();
  registry.on.index("v1/configmaps", ({ name, labels }) => ({ [labels.team ?? "none"]: name }), { id: "byTeam" });
  registry.on.index("v1/configmaps", ({ namespace = "", name, labels }) => [[[namespace, labels.team ?? ""], name]],
    { id: "byPlace" });
  registry.on.reconcile(KEX, ({ namespace, indexes, cache, patch }) => {    // called again every 0.1 s
    const listed = cache.list("v1/configmaps", { index: { id: "byPlace", key: [namespace!, "green"] } });
    const byTeam = [...(indexes.byTeam as Index<string, string>)].sort();
    patch.metadata.annotations = { seen: JSON.stringify([byTeam, listed.map((o) => o.metadata.name).sort()]) };
    return { requeueAfter: 0.1 };
  });
  await using kit = await startOperator({ registry, ...quiet, crds: [CRD] });
  const seen = (want: unknown) => kit.until(KEX, "p", (o) => o.metadata.annotations?.seen === JSON.stringify(want));
  await cm(kit, "a", {}, { team: "red" }); await cm(kit, "b", {}, { team: "red" });
  await kit.apply(KEX, { metadata: { name: "p" }, spec: {} });
  await seen([[["red", ["a", "b"]]], []]);
  kit.sandbox.faults.mergeWatches({ plural: "configmaps" });              // the watch hears nothing from here
  await cm(kit, "a", {}, { team: "green" }); await cm(kit, "c", {}, { team: "green" });
  await kit.delete("v1/configmaps", "b");
  kit.sandbox.faults.expireWatches({ plural: "configmaps" });             // 410: what it held is lost, it relists
  kit.sandbox.faults.releaseMerged();
  await kit.logs.until(/410 Gone.*relisting resource=configmaps/);
  await seen([[["green", ["a", "c"]]], ["a", "c"]]);                       // a left "red", b left the index
}, 30_000);

test("memo: startup's, shallow-copied per object, each kept across cycles; on.probe and on.cleanup read indexes",
  async () => {
    const registry = new Registry();
    let atCleanup = -1;
    registry.on.index("v1/configmaps", ({ name }) => ({ [name]: true }), { id: "names" });
    registry.on.startup(({ memo }) => { Object.assign(memo, { vault: { pending: 3 }, flag: "startup" }); });
    registry.on.probe(({ memo, indexes }) => [memo.vault.pending, indexes.names!.size], { id: "vault" });
    registry.on.cleanup(({ indexes }) => { atCleanup = indexes.names!.size; });
    const note = ({ name, memo, patch }: { name: string; memo: Record<string, any>; patch: any }) => {
      patch.metadata.annotations = { memo: JSON.stringify([memo.region, memo.flag, memo.mine ?? 0]) };
      memo.vault.pending += 1;                                             // shared: the same object everywhere
      Object.assign(memo, { flag: name, mine: (memo.mine ?? 0) + 1 });     // this object's own
    };
    for (const cause of ["create", "update"] as const) registry.on[cause]("v1/configmaps", note, { id: cause });
    await using kit = await startOperator({ registry, ...quiet, memo: { region: "eu" },
      flags: { liveness: "http://127.0.0.1:0/healthz" } });
    const url = (await kit.logs.until(/serving probes/)).match(/url=(\S+)/)![1]!;
    for (const [name, v, flag, mine] of [["a", "1", "startup", 0], ["b", "1", "startup", 0], ["a", "2", "a", 1]]) {
      await cm(kit, String(name), { v: String(v) });
      const want = JSON.stringify(["eu", flag, mine]);
      await kit.until("v1/configmaps", String(name), (o) => o.metadata.annotations?.memo === want);
    }
    expect(await (await fetch(url)).json()).toMatchObject({ probes: { vault: [6, 2] } });
    await kit.delete("v1/configmaps", "b"); await kit.gone("v1/configmaps", "b");
    await kit.stop();
    expect(atCleanup).toBe(1);                                             // as last seen
  }, 30_000);

test("a registration that cannot work (an index id twice, an unnamed index) exits 3, one line naming it", async () => {
  const kubeconfig = kubeconfigFile(dir, "never-contacted.yaml", "http://127.0.0.1:9");
  const index = (res: string, id = "") => `on.index("${res}", ({ name }) => ({ [name]: 1 })${id});\n`;
  const results = await Promise.all([index("v1/configmaps", `, { id: "dup" }`) + index("v1/secrets", `, { id: "dup" }`),
    index("v1/pods")].map((source, i) => kobun(["run", handlerModule(dir, `bad-${i}.ts`, `import { on } from "kobun";\n`
    + source), "--kubeconfig", kubeconfig, "--standalone"], { env: userEnv({ HOME: dir }) })));
  expect(results.map((r) => [r.code, ...r.stderr.trim().split("\n")])).toEqual([
    [3, expect.stringMatching(/"dup" is already registered: pass a distinct/)],
    [3, expect.stringMatching(/name the index \(a named function, or \{ id \}\)/)]]);
}, 30_000);

test("`npx kobun docs` in a project: the installed package's docs/, each guide of docs/README.md and its summary",
  async () => {
    const [project, installed] = [join(dir, "project"), join(dir, "project", "node_modules", "kobun")];
    const parts = ["bin", "src", "docs", "package.json", "README.md"];
    for (const part of parts) cpSync(join(root, part), join(installed, part), { recursive: true });
    const docs = await finish(["node", join(installed, "bin", "kobun.js"), "docs"],
      { cwd: project, env: userEnv({ HOME: dir }) });
    expect([docs.code, docs.stdout.split("\n")[0]]).toEqual([0, `kobun's guides (this version's) are in `
      + `${join(installed, "docs")}; the overview is ${join(installed, "README.md")}.`]);
    const index = readFileSync(join(root, "docs", "README.md"), "utf8");
    for (const [, title, file, about] of index.matchAll(/^- \[(.+?)\]\((.+?)\)(?:: (.*))?$/gm)) {
      const summary = about ? `${title}: ${about}` : title;
      expect(docs.stdout).toContain(`  ${join(installed, "docs", file!)}\n      ${summary}\n`);
    }
  }, 30_000);

// generate types: a CRD installed into the sandbox; what it takes must typecheck against the output, the rest not.
const WIDGETS = `{ apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition,
  metadata: { name: widgets.blackbox.kobun.dev },
  spec: { group: blackbox.kobun.dev, scope: Namespaced, names: { kind: Widget, plural: widgets }, versions: [
    { name: v1alpha1, served: false, storage: false, schema: { openAPIV3Schema: { type: object } } },
    { name: v1beta1, served: true, storage: false, schema: { openAPIV3Schema: { type: object, properties: {
      spec: { type: object, properties: { size: { type: integer } } } } } } },
    { name: v1, served: true, storage: true, schema: { openAPIV3Schema: { type: object, properties: {
      spec: { type: object, required: [mode, port], properties: {
        mode: { type: string, enum: [full, delta] }, port: { x-kubernetes-int-or-string: true },
        target: { anyOf: [{ type: integer }, { type: string }], x-kubernetes-int-or-string: true },
        owner: { type: string, nullable: true }, labels: { type: object, additionalProperties: { type: string } },
        template: { type: object, properties: { limits: { type: object, properties: { cpu: { type: number } } } } },
        config: { type: object, x-kubernetes-preserve-unknown-fields: true },
        value: { x-kubernetes-preserve-unknown-fields: true } } } } } } } ] } }`;
const certificate = (group: string) => `{ apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition,
  metadata: { name: certificates.${group} }, spec: { group: ${group}, scope: Namespaced,
  names: { kind: Certificate, plural: certificates }, versions: [{ name: v1, served: true, storage: true,
  schema: { openAPIV3Schema: { type: object, x-kubernetes-preserve-unknown-fields: true } } }] } }\n`;
/** Widgets by name: [version, spec]; the API server refuses REFUSED, and keeps `value` of any JSON type. */
const OBJECTS: Record<string, [string, object]> = { full: ["v1", { mode: "full", port: 80, target: "http", owner: null,
  labels: { a: "b" }, template: { limits: { cpu: 0.5 } }, config: { any: { deep: [1, "two"] } } }],
old: ["v1beta1", { size: 3 }], badMode: ["v1", { mode: "fast", port: 1 }], noPort: ["v1", { mode: "full" }],
badMap: ["v1", { mode: "full", port: 1, labels: { a: 1 } }], ...Object.fromEntries([42, "text", [1, "a"], true]
  .map((value, i) => [`value${i}`, ["v1", { mode: "full", port: "http", value }]])) };
const [REFUSED, NAMES] = [["badMode", "noPort", "badMap"], Object.keys(OBJECTS)];
let generating: ReturnType<typeof generate> | undefined;
const generated = () => (generating ??= generate());
const errorsIn = async (file: string) => (await generated()).errors.filter((line) => line.includes(`/${file}.ts(`));

async function generate() {
  const types = scratchDir();
  writeFileSync(join(types, "widgets.crd.yaml"), WIDGETS);
  writeFileSync(join(types, "certs.crd.yaml"), `${certificate("a.example.com")}---\n${certificate("b.example.com")}`);
  const sandbox = await startSandbox();
  try {
    const post = async (path: string, body: unknown) => (await fetch(`${sandbox.url}${path}`,
      { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })).status;
    const crd = await post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", Bun.YAML.parse(WIDGETS));
    const taken = await Promise.all(Object.entries(OBJECTS).map(([name, [version, spec]]) => {
      const [type, metadata] = [version === "v1" ? "Widget" : "WidgetV1beta1", { name: name.toLowerCase() }];
      const object = { apiVersion: `blackbox.kobun.dev/${version}`, kind: "Widget", metadata, spec };
      writeFileSync(join(types, `${name}.ts`), `import type { ${type} } from "./widgets.ts";\nexport const ${name}: `
        + `${type} = ${JSON.stringify(object)};\n`);
      return post(`/apis/blackbox.kobun.dev/${version}/namespaces/default/widgets`, object);
    }));
    const gen = (...more: string[]) => kobun(["generate", "types", ...more], { env: userEnv({ HOME: types }) });
    const [out, fromCluster, certs] = await Promise.all([
      gen("--crd", join(types, "widgets.crd.yaml"), "--out", join(types, "widgets.ts")),
      gen("--from-cluster", "--kubeconfig", sandbox.kubeconfigPath, "--group", "blackbox.kobun.dev"),
      gen("--crd", join(types, "certs.crd.yaml"), "--out", join(types, "certs.ts"))]);
    const compilerOptions = { strict: true, noEmit: true, module: "Preserve", moduleResolution: "bundler",
      types: ["bun"], allowImportingTsExtensions: true };
    writeFileSync(join(types, "tsconfig.json"), JSON.stringify({ include: ["./*.ts"], compilerOptions }));
    const tsc = await finish([join(root, "node_modules/.bin/tsc"), "--pretty", "false", "-p", types], { ms: 60_000 });
    const read = (file: string) => readFileSync(join(types, file), "utf8");
    const [text, certsText] = [read("widgets.ts"), read("certs.ts")];
    return { crd, taken, out, fromCluster, certs, certsText, text, errors: `${tsc.stdout}${tsc.stderr}`.split("\n") };
  } finally {
    await sandbox.stop();
    rmSync(types, { recursive: true, force: true });
  }
}

test("generate types: a CRD's versions, nested objects, enums, int-or-string, nullable, maps; --from-cluster",
  async () => {
    const { crd, taken, out, fromCluster, text } = await generated();
    expect([crd, ...taken]).toEqual([201, ...NAMES.map((name) => (REFUSED.includes(name) ? 422 : 201))]);
    expect([out.code, out.stdout, fromCluster.code, fromCluster.stdout.trim()]).toEqual([0, "", 0, text.trim()]);
    const lines = ["export interface WidgetV1beta1 {", "export interface WidgetV1 {", "export type Widget = WidgetV1;",
      'mode: "full" | "delta";', "port: number | string;", "target?: number | string;", "owner?: string | null;"];
    expect(lines.filter((line) => !text.includes(line))).toEqual([]);
    const typed = NAMES.filter((name) => !name.startsWith("value"));   // what the server takes typechecks, the rest not
    const refused = await Promise.all(typed.map(async (name) => [name, (await errorsIn(name)).length > 0]));
    expect(refused).toEqual(typed.map((name) => [name, REFUSED.includes(name)]));
    expect(await errorsIn("widgets")).toEqual([]);
  }, 60_000);

test("generate types: a field with preserve-unknown-fields and no type holds any JSON value, typed so", async () => {
  // `unknown`, not `{ [key: string]: unknown }`: a number, a string, an array or a boolean there, all of which the
  // API server keeps (the test above), typechecks (it once did not).
  const values = NAMES.filter((name) => name.startsWith("value"));
  expect((await Promise.all(values.map(errorsIn))).flat()).toEqual([]);
}, 60_000);

test("generate types: two CRDs of one kind in two groups give output that typechecks", async () => {
  const { certs, certsText } = await generated();
  expect(certs.code).toBe(0);
  // Named with the group (README): both were once `CertificateV1` and `Certificate`, duplicate identifiers.
  for (const group of ["AExampleCom", "BExampleCom"]) {
    expect(certsText).toContain(`export type Certificate${group} = Certificate${group}V1;`);
  }
  expect(await errorsIn("certs")).toEqual([]);
}, 60_000);

test("generate types: an interface per served version only (README, Typed resources)", async () => {
  // The version with served: false (v1alpha1, which the API server answers 404 for) gets none.
  expect((await generated()).text).not.toContain("WidgetV1alpha1");
}, 60_000);
