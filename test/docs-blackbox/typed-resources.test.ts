// Typed resources and the manifests made from them, as README.md ("Typed resources", "Resources in kobun.yaml",
// "Secrets, sensitive fields and large objects", "Deploying"), docs/api.md, project.md and configuration.md say:
// a defined resource's CRD (forms, versions, columns) and the sandbox validating against it, typed tokens, on.field's
// typed path, metadataOnly, a resource's own namespaces and version, `resources:` keys (kubectl forms, bad ones).

import { expect, test } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import Type from "typebox";
import { defineResource, Registry, resource } from "kobun";
import { startOperator } from "kobun/testing";
import { root, scratchDir } from "./helpers.ts";

const group = "blackbox.kobun.dev";
const O = Type.Optional;
const Things = () => defineResource({
  group, kind: "Thing", plural: "things", shortNames: ["th"], scope: "Namespaced", versions: ["v1", "v1beta1"],
  schema: {
    spec: Type.Object({
      size: Type.Integer({ minimum: 1 }), mode: Type.Union([Type.Literal("full"), Type.Literal("delta")]),
      note: O(Type.Union([Type.String(), Type.Null()])), port: O(Type.Union([Type.Integer(), Type.String()])),
      labels: O(Type.Record(Type.String(), Type.Integer())), ratio: O(Type.Number({ exclusiveMinimum: 0 })),
      tags: O(Type.Array(Type.String(), { uniqueItems: true })), extra: O(Type.Unknown()), password: O(Type.String()),
    }),
    status: Type.Object({ phase: O(Type.String()), f: O(Type.Unknown()), api: O(Type.String()) }),
  },
  printerColumns: [{ name: "Size", type: "integer", jsonPath: ".spec.size" }],
});

async function kobun(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = Bun.spawn([process.execPath, join(root, "src", "cli.ts"), ...args],
    { cwd, stdout: "pipe", stderr: "pipe", env: { ...process.env, KUBECONFIG: "/nonexistent" } });
  const text = (stream: ReadableStream) => new Response(stream).text();
  const [stdout, stderr, code] = await Promise.all([text(child.stdout), text(child.stderr), child.exited]);
  return { code, stdout, stderr };
}

/** A project whose handlers define Thing (short name th) and index Secrets; `yamls` are config files. */
function project(yamls: Record<string, string>): string {
  const dir = scratchDir();
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "things-op", version: "1.0.0" }));
  mkdirSync(join(dir, "handlers"));
  writeFileSync(join(dir, "handlers", "things.ts"), `import { defineResource, on } from "kobun";
import Type from "typebox";
export const Things = defineResource({ group: "${group}", kind: "Thing", plural: "things", shortNames: ["th"],
  schema: { spec: Type.Object({ size: Type.Integer() }), status: Type.Object({ phase: Type.Optional(Type.String()) }) },
  printerColumns: [{ name: "Size", type: "integer", jsonPath: ".spec.size" }] });
on.create(Things, ({ spec, patch }) => { patch.status.phase = String(spec.size); }, { id: "c" });
on.index("v1/secrets", ({ name }) => ({ [name]: name }), { id: "byName" });\n`);
  for (const [name, text] of Object.entries(yamls)) writeFileSync(join(dir, name), text);
  return dir;
}
/** A test body run in a folder `make` makes (a fresh scratch one), removed afterwards. */
const inDir = (fn: (dir: string) => Promise<void>, make = scratchDir) => async () => {
  const dir = make();
  try { await fn(dir); } finally { rmSync(dir, { recursive: true, force: true }); }
};
const configured = (dir: string, yaml: string) =>
  (writeFileSync(join(dir, "kobun.yaml"), yaml), join(dir, "kobun.yaml"));
const start = (registry: Registry, config?: string, more: Parameters<typeof startOperator>[0] = {}) =>
  startOperator({ registry, logLevel: "silent", timeout: 15_000, ...(config ? { flags: { config } } : {}), ...more });
type Manifest = { kind: string; metadata: { name: string; namespace?: string }; spec?: any; rules?: any[] };
const manifestsOf = (out: string) => parseAllDocuments(out).map((d) => d.toJS() as Manifest).filter(Boolean);

test("defineResource's crd: names, scope, the first version stored, status subresource, columns, forms", () => {
  const crd = Things().crd as any;
  expect([crd.apiVersion, crd.kind, crd.metadata.name])
    .toEqual(["apiextensions.k8s.io/v1", "CustomResourceDefinition", `things.${group}`]);
  expect(crd.spec).toMatchObject({ scope: "Namespaced",
    names: { kind: "Thing", plural: "things", singular: "thing", shortNames: ["th"] } });
  expect(crd.spec.versions.map((v: any) => [v.name, v.served, v.storage]))
    .toEqual([["v1", true, true], ["v1beta1", true, false]]);
  const [v1] = crd.spec.versions;
  expect(v1.subresources).toEqual({ status: {} });
  expect(v1.additionalPrinterColumns).toEqual([{ name: "Size", type: "integer", jsonPath: ".spec.size" }]);
  const spec = v1.schema.openAPIV3Schema.properties.spec;
  expect(spec.required).toEqual(["size", "mode"]);
  expect(spec.properties.size).toEqual({ type: "integer", minimum: 1 });
  expect(spec.properties.mode).toEqual({ type: "string", enum: ["full", "delta"] });
  expect(spec.properties.note).toEqual({ type: "string", nullable: true });
  expect(spec.properties.labels).toEqual({ type: "object", additionalProperties: { type: "integer" } });
  expect(spec.properties.ratio).toEqual({ type: "number", minimum: 0, exclusiveMinimum: true });
  expect(spec.properties)
    .toMatchObject({ port: { "x-kubernetes-int-or-string": true }, tags: { "x-kubernetes-list-type": "set" } });
  expect(spec.properties.extra).toEqual({ "x-kubernetes-preserve-unknown-fields": true });
});

test("defineResource refuses what has no CRD form with a RegistrationError naming the field", () => {
  const refuse = (field: object) => {
    try { defineResource({ group, kind: "Hello", plural: "hellos", schema: { spec: Type.Object(field as never) } }); }
    catch (error) { return `${(error as Error).name}: ${(error as Error).message}`; }
    return "accepted";
  };
  const head = 'defineResource("Hello"): spec.';
  expect(refuse({ pair: Type.Tuple([Type.String(), Type.Integer()]) }))
    .toStartWith(`RegistrationError: ${head}pair: Type.Tuple has no CRD form`);
  const more = { either: Type.Union([Type.String(), Type.Number()]), keyed: Type.Record(Type.Integer(), Type.String()),
    nothing: Type.Null(), objs: Type.Array(Type.Object({ a: Type.String() }), { uniqueItems: true }) };
  for (const [k, t] of Object.entries(more)) expect(refuse({ [k]: t })).toStartWith(`RegistrationError: ${head}${k}: `);
});

test("the sandbox validates a defined resource's objects against its schema, and prunes unknown fields", async () => {
  const [Things_, registry] = [Things(), new Registry()];
  registry.on.create(Things_, ({ spec, patch }) => { patch.status.phase = spec.mode; }, { id: "c" });
  await using kit = await start(registry);
  const bad = (spec: object) =>
    kit.apply(Things_, { metadata: { name: "bad" }, spec: spec as never }).then(() => "accepted", String);
  const bads: [object, string][] = [[{ size: 0, mode: "full" }, "size"], [{ size: 1, mode: "other" }, "mode"],
    [{ mode: "full" }, "size"], [{ size: 1, mode: "full", labels: { a: "x" } }, "labels"]];
  for (const [spec, field] of bads) expect(await bad(spec)).toContain(`spec.${field}`);
  const spec = { size: 2, mode: "delta", note: null, port: "http" } as const;
  await kit.apply(Things_, { metadata: { name: "ok" }, spec: { ...spec, bogus: 1 } as never });
  const ok = await kit.until(Things_, "ok", (o) => o.status?.phase);
  expect([ok.status?.phase, ok.spec]).toEqual(["delta", spec]);
}, 30_000);

test("a VersionedDefinition: the token is the storage version's, one per version; either's objects", async () => {
  const Gadgets = defineResource({
    group, kind: "Gadget", plural: "gadgets", versions: {
      v1beta1: { schema: { spec: Type.Object({ size: Type.Integer() }) }, deprecated: "use v1",
        printerColumns: [{ name: "Old", type: "integer", jsonPath: ".spec.size" }] },
      v1: { schema: { spec: Type.Object({ size: Type.Integer(), color: Type.Optional(Type.String()) }),
        status: Type.Object({ seen: Type.Optional(Type.Integer()) }) }, storage: true },
    },
  });
  const { v1beta1, v1 } = Gadgets.versions;
  expect([Gadgets.version, v1beta1.version, v1.version]).toEqual(["v1", "v1beta1", "v1"]);
  const registry = new Registry();
  registry.on.create(Gadgets, ({ spec, patch }) => { patch.status.seen = spec.size; }, { id: "c" });
  await using kit = await start(registry);
  const crd = await kit.get("customresourcedefinitions.apiextensions.k8s.io/v1", `gadgets.${group}`) as any;
  const byName = Object.fromEntries(crd.spec.versions.map((v: any) => [v.name, v]));
  expect(crd.spec.versions.filter((v: any) => v.storage).map((v: any) => v.name)).toEqual(["v1"]);
  expect(byName.v1beta1).toMatchObject({ served: true, deprecated: true, deprecationWarning: "use v1" });
  expect(byName.v1beta1.additionalPrinterColumns).toEqual([{ name: "Old", type: "integer", jsonPath: ".spec.size" }]);
  expect(byName.v1.schema.openAPIV3Schema.properties.spec.properties.color).toEqual({ type: "string" });
  await kit.apply(v1beta1, { metadata: { name: "old" }, spec: { size: 4 } });
  expect((await kit.until(Gadgets, "old", (o) => o.status?.seen)).status?.seen).toBe(4);
  expect((await kit.get(v1beta1, "old"))?.apiVersion).toBe(`${group}/v1beta1`);
}, 30_000);

test("tokens: resource.deployments is apps/v1, alias and metadataOnly not enumerable, typed patches", async () => {
  expect({ ...resource.deployments }).toEqual({ group: "apps", version: "v1", plural: "deployments" });
  const Pods = resource("v1/pods", { alias: "pods", metadataOnly: true });
  expect([Pods.alias, Pods.metadataOnly, Object.keys(Pods).sort()])
    .toEqual(["pods", true, ["group", "plural", "version"]]);
  const registry = new Registry();
  registry.on.create(resource.deployments, ({ spec, patch }) => { patch.spec.replicas = (spec.replicas ?? 0) + 1; },
    { id: "bump" });
  await using kit = await start(registry);
  const [labels, containers] = [{ app: "web" }, [{ name: "web", image: "nginx" }]];
  const spec = { replicas: 2, selector: { matchLabels: labels },
    template: { metadata: { labels }, spec: { containers } } };
  await kit.apply(resource.deployments, { metadata: { name: "web" }, spec });
  expect((await kit.until(resource.deployments, "web", (d) => d.spec?.replicas !== 2)).spec?.replicas).toBe(3);
}, 30_000);

// A Database operator owns a PodDisruptionBudget: every kind the sandbox serves for operators has its token.
test("tokens: the PodDisruptionBudget, NetworkPolicy, ReplicaSet and HPA tokens name what the sandbox serves", async () => {
  const registry = new Registry();
  registry.on.reconcile(resource.poddisruptionbudgets, ({ patch }) => { patch.metadata.labels = { seen: "yes" }; });
  await using kit = await start(registry);
  const labels = { app: "db" };
  await kit.apply(resource.poddisruptionbudgets, { metadata: { name: "db" }, spec: { maxUnavailable: 1,
    selector: { matchLabels: labels } } });
  await kit.until(resource.poddisruptionbudgets, "db", (p) => p.metadata.labels?.seen === "yes");
  expect((await kit.apply(resource.networkpolicies, { metadata: { name: "db" }, spec: { podSelector: {} } })).kind)
    .toBe("NetworkPolicy");
  const template = { metadata: { labels }, spec: { containers: [{ name: "db", image: "postgres" }] } };
  expect((await kit.apply(resource.replicasets, { metadata: { name: "db" }, spec: { selector: { matchLabels: labels },
    template } })).kind).toBe("ReplicaSet");
  const hpa = await kit.apply(resource.horizontalpodautoscalers, { metadata: { name: "db" },
    spec: { maxReplicas: 3, scaleTargetRef: { apiVersion: "apps/v1", kind: "StatefulSet", name: "db" } } });
  expect(hpa.apiVersion).toBe("autoscaling/v2");
}, 30_000);

test("on.field, a typed path: old/new are the field's values, from the creation on; others skip it", async () => {
  const [Things_, registry, calls] = [Things(), new Registry(), [] as unknown[]];
  registry.on.field(Things_, { field: "spec.size", id: "f" }, ({ old, new: size }) => {
    const typed: number | undefined = size;                    // ValueAt: tsc checks it
    calls.push([old, typed]);
    return { n: calls.length };
  });
  registry.on.update(Things_, ({ spec, patch }) => { patch.status.phase = spec.mode; }, { id: "u" });
  // @ts-expect-error: a path the object type does not have is a compile error
  new Registry().on.field(Things_, { field: "spec.nope", id: "x" }, () => {});
  await using kit = await start(registry);
  const runs = (n: number) => (o: { status?: { f?: unknown } }) => (o.status?.f as { n?: number } | undefined)?.n === n;
  await kit.apply(Things_, { metadata: { name: "t" }, spec: { size: 1, mode: "full" } });
  await kit.until(Things_, "t", runs(1));
  await kit.apply(Things_, { metadata: { name: "t" }, spec: { size: 1, mode: "delta" } });
  await kit.until(Things_, "t", (o) => o.status?.phase === "delta");     // the mode-only update handled
  await kit.apply(Things_, { metadata: { name: "t" }, spec: { size: 3, mode: "delta" } });
  await kit.until(Things_, "t", runs(2));
  expect(calls).toEqual([[undefined, 1], [1, 3]]);
}, 30_000);

test("metadataOnly on a token: metadata only (logged, ctx.spec.x throws); kobun.yaml overrules", inDir(async (dir) => {
  const [registry, seen] = [new Registry(), {} as Record<string, unknown>];
  registry.on.create(resource("v1/configmaps", { metadataOnly: true }), (ctx) => {
    try { seen.spec = (ctx.spec as Record<string, unknown>).anything; } catch (error) { seen.error = (error as Error).message; }
    seen.data = (ctx.body as { data?: unknown }).data;
    ctx.patch.metadata.labels = { seen: "yes" };
  }, { id: "cm" });
  registry.on.create(resource("v1/secrets", { metadataOnly: true }), ({ body, patch }) => {
    [seen.secret, patch.metadata.labels] = [(body as { data?: unknown }).data, { seen: "yes" }];
  }, { id: "sec" });
  await using kit = await start(registry, configured(dir, "resources:\n  secrets: { metadataOnly: false }\n"));
  const said = kit.logs.lines.filter((l) => l.includes("metadata-only"));
  expect(said.some((l) => l.includes("resource=configmaps") && l.includes("why="))).toBe(true);
  expect(said.some((l) => l.includes("secrets"))).toBe(false);
  await kit.apply("v1/configmaps", { metadata: { name: "c" }, data: { k: "v" } });
  await kit.apply("v1/secrets", { metadata: { name: "s" }, type: "Opaque", data: { k: btoa("v") } });
  await kit.until("v1/configmaps", "c", (o) => o.metadata.labels?.seen);
  await kit.until("v1/secrets", "s", (o) => o.metadata.labels?.seen);
  expect(seen.error).toMatch(/ctx\.spec\.anything: not received, .*metadata-only/);
  expect(seen.data).toBeUndefined();
  expect(seen.secret).toEqual({ k: btoa("v") });
}), 30_000);

test("resources: a resource's own namespaces (team-*) replace the kit's for it", inDir(async (dir) => {
  const registry = new Registry();
  registry.on.create("v1/configmaps", ({ patch }) => { patch.metadata.labels = { seen: "yes" }; }, { id: "c" });
  const config = configured(dir, "resources:\n  configmaps: { namespaces: { include: ['team-*'] } }\n");
  await using kit = await start(registry, config);
  await kit.apply("v1/namespaces", { metadata: { name: "team-a" } });
  await kit.apply("v1/configmaps", { metadata: { name: "there" } }, { namespace: "team-a" });
  await kit.apply("v1/configmaps", { metadata: { name: "here" } });
  await kit.until("v1/configmaps", "there", (o) => o.metadata.labels?.seen, { namespace: "team-a" });
  await kit.consistently("v1/configmaps", "here", (o) => !o?.metadata.labels?.seen, { for: 300 });
}), 30_000);

test("resources: version serves another where the selector names none; a typed token's: exit 3", inDir(async (dir) => {
  const [Things_, typed, plain] = [Things(), new Registry(), new Registry()];
  typed.on.create(Things_, () => {}, { id: "typed" });
  const config = configured(dir, `resources:\n  things.${group}: { version: v1beta1 }\n`);
  const refused = await start(typed, config).then(() => undefined, (e: Error) => e);
  expect((refused?.cause as { exitCode?: number } | undefined)?.exitCode).toBe(3);
  expect(refused?.message).toContain(`resources.things.${group}.version: the handlers name v1 in their selector`);
  plain.on.create(`things.${group}`, ({ body, patch }) => { patch.status.api = body.apiVersion; }, { id: "c" });
  writeFileSync(join(dir, "things.yaml"), JSON.stringify(Things_.crd));
  await using kit = await start(plain, config, { crds: [join(dir, "things.yaml")] });
  await kit.apply(Things_, { metadata: { name: "t" }, spec: { size: 1, mode: "full" } });
  expect((await kit.until(Things_, "t", (o) => o.status?.api)).status?.api).toBe(`${group}/v1beta1`);
}), 30_000);

test("kobun manifests: the defined CRD; RBAC patch and /status only for what kobun writes", inDir(async (dir) => {
  const { code, stdout, stderr } = await kobun(["manifests", "-n", "default", "--standalone"], dir);
  expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
  const objects = manifestsOf(stdout);
  const crd = objects.find((o) => o.kind === "CustomResourceDefinition" && o.metadata.name === `things.${group}`);
  expect(crd?.spec).toMatchObject({ names: { shortNames: ["th"] }, versions: [{ subresources: { status: {} },
    additionalPrinterColumns: [{ name: "Size", type: "integer", jsonPath: ".spec.size" }] }] });
  const rules = objects.filter((o) => o.kind === "Role" || o.kind === "ClusterRole").flatMap((r) => r.rules ?? []);
  const verbsOf = (res: string) => rules.filter((r) => r.resources.includes(res)).flatMap((r) => r.verbs);
  expect(verbsOf("things")).toContain("patch");
  expect(verbsOf("things/status")).toContain("patch");
  expect(verbsOf("secrets").filter((v) => v !== "get").sort()).toEqual(["list", "watch"]);  // only an index reads them
  expect(verbsOf("secrets/status")).toEqual([]);
}, () => project({})), 30_000);

const forms = ["Thing", "THING", "thing", "th", `things.${group}`, `things.v1.${group}`, `${group}/v1/things`];
const formFiles = Object.fromEntries(forms.map((f, i) =>
  [`k${i}.yaml`, `resources:\n  "${f}": { namespaces: { include: [team-a] } }\n`]));
test("resources: keys in kubectl's forms (kind in any case, singular, short name, plural.group)", inDir(async (dir) => {
  const results = await Promise.all(forms.map((_, i) =>
    kobun(["manifests", "--config", `k${i}.yaml`, "-n", "default", "--standalone"], dir)));
  const granted = results.map((r, i) => [forms[i], r.code, manifestsOf(r.stdout).some((o) => o.kind === "Role"
    && o.metadata.namespace === "team-a" && o.rules?.some((rule) => rule.resources.includes("things")))]);
  expect(granted).toEqual(forms.map((f) => [f, 0, true]));
}, () => project(formFiles)), 60_000);

const badKeys = ["resources:", "  widgets: { labelSelector: 'a=b' }", "  things.other.dev: { workers: { limit: 2 } }",
  "  Thing: { labelSelector: 'x=y' }", "  th: { labelSelector: 'x=z' }"];
const manifests = (dir: string) => kobun(["manifests", "--config", "bad.yaml", "-n", "default", "--standalone"], dir);

test("resources: a key naming nothing, another group, a second entry: exit 3, file:line, key", inDir(async (dir) => {
  const { code, stderr } = await manifests(dir);
  expect(code).toBe(3);
  const expected = [["widgets", 2], ["things.other.dev", 3], ["th", 5]] as const;
  for (const [key, line] of expected) expect(stderr).toContain(`bad.yaml:${line}: resources.${key}: `);
}, () => project({ "bad.yaml": [...badKeys, ""].join("\n") })), 30_000);

test("resources: a bad value is reported first; bad keys in the second round, together (configuration.md)",
  inDir(async (dir) => {
    const first = await manifests(dir);
    expect(first.code).toBe(3);
    expect(first.stderr).toContain("bad.yaml:6: resources.secrets.metadataOnly");
    writeFileSync(join(dir, "bad.yaml"), [...badKeys, "  secrets: { metadataOnly: true }", ""].join("\n"));
    const second = await manifests(dir);
    expect(second.code).toBe(3);
    expect(second.stderr).toContain("bad.yaml:2: resources.widgets: ");
  }, () => project({ "bad.yaml": [...badKeys, "  secrets: { metadataOnly: sometimes }", ""].join("\n") })), 30_000);

test("a sensitive field stays out of the annotations (storage: annotations), status, log", inDir(async (dir) => {
  const [Things_, registry] = [Things(), new Registry()];
  registry.on.create(Things_, () => {}, { id: "c", sensitive: ["spec.password"] });
  const changed = (diff: readonly { unknown?: string }[]) => ({ changed: diff.map((d) => d.unknown).join() });
  registry.on.update(Things_, ({ diff, patch }) => { patch.metadata.labels = changed(diff); }, { id: "u" });
  const config = configured(dir, `resources:\n  things.${group}: { storage: annotations }\n`);
  await using kit = await start(registry, config, { logCapture: "debug" });
  const apply = (password: string) =>
    kit.apply(Things_, { metadata: { name: "db" }, spec: { size: 1, mode: "full", password } });
  await apply("hunter2-one");
  const made = await kit.until(Things_, "db", (o) => o.metadata.annotations?.["kobun.dev/last-handled-configuration"]);
  await apply("hunter2-two");
  const after = await kit.until(Things_, "db", (o) => o.metadata.labels?.changed);
  expect(after.metadata.labels?.changed).toBe("sensitive");
  for (const o of [made, after]) expect(JSON.stringify([o.metadata.annotations, o.status])).not.toContain("hunter2");
  expect((made.status as Record<string, unknown> | undefined)?.kobun).toBeUndefined();
  expect(kit.logs.lines.filter((l) => l.includes("hunter2"))).toEqual([]);   // not a doc claim: a debug log's diffs
}), 30_000);

test("a write refused as too large: logged, one TooLarge Warning, handlers paused until a change", async () => {
  const registry = new Registry(); let calls = 0;
  registry.on.create("v1/configmaps", ({ patch }) => { patch.metadata.labels = { done: `${++calls}` }; }, { id: "c" });
  await using kit = await start(registry, undefined, { logCapture: "warn" });
  const fill = "x".repeat(256 * 1024 - "fill".length - 8);               // annotations hold 256 KiB in total
  const cm = await kit.apply("v1/configmaps", { metadata: { name: "big", annotations: { fill } } });
  const events = await kit.events(cm, { until: (list) => list.some((e) => e.reason === "TooLarge") });
  expect(events.filter((e) => e.reason === "TooLarge").map((e) => e.type)).toEqual(["Warning"]);
  expect(kit.logs.lines.some((l) => /too (large|long)/i.test(l) && l.includes("big"))).toBe(true);
  await kit.consistently("v1/configmaps", "big", (o) => !o?.metadata.labels?.done, { for: 500 });
  expect(calls).toBe(1);
  await kit.apply("v1/configmaps", { metadata: { name: "big", annotations: { fill: "small" } } });
  await kit.until("v1/configmaps", "big", (o) => o.metadata.labels?.done === "2");
}, 30_000);
