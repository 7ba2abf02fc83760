// The commented-out admission example in handlers/admission.ts, uncommented and run against
// the sandbox (as `kobun dev` would, its webhooks on a loopback port): it must keep working
// as its comments say, although the example operator does not load it.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveSettings } from "../../src/config/index.ts";
import type { Registry } from "../../src/declaring/registry.ts";
import { run } from "../../src/runtime/operator.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { Logger, memorySink } from "../../src/util/log.ts";

const repo = join(import.meta.dir, "../..");
const IMPORT = '// import { AdmissionError, on } from "kobun";';

/** The example's code without its comment marks, registering into a registry of its own. */
async function loadUncommented(dir: string): Promise<Registry> {
  const text = readFileSync(join(repo, "handlers/admission.ts"), "utf8");
  const start = text.indexOf(IMPORT);
  expect(start).toBeGreaterThan(0);
  const code = text.slice(start + IMPORT.length).split("\n").filter((l) => l.startsWith("//")).map((l) => l.replace(/^\/\/ ?/, "")).join("\n");
  const file = join(dir, "admission-example.ts");
  writeFileSync(file, [
    `import { AdmissionError } from ${JSON.stringify(join(repo, "src/declaring/kinds/webhooks.ts"))};`,
    `import { Registry } from ${JSON.stringify(join(repo, "src/declaring/registry.ts"))};`,
    "export const registry = new Registry();",
    "const on = registry.on;",
    code,
  ].join("\n"));
  return ((await import(file)) as { registry: Registry }).registry;
}

let sandbox: Sandbox;
let dir: string;
const stop = new AbortController();
let operator: Promise<unknown>;
const examples = () => `${sandbox.url}/apis/kobun.dev/v1/namespaces/default/kobunexamples`;
const create = (name: string, spec: Record<string, unknown>) => fetch(examples(), {
  method: "POST", headers: { "content-type": "application/json" },
  body: JSON.stringify({ apiVersion: "kobun.dev/v1", kind: "KobunExample", metadata: { name }, spec }),
});

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "kobun-admission-example-"));
  const registry = await loadUncommented(dir);
  sandbox = await startSandbox();
  const crd = Bun.YAML.parse(readFileSync(join(repo, "handlers/kobunexample.crd.yaml"), "utf8"));
  await fetch(`${sandbox.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(crd) });
  const settings = resolveSettings({ flags: { kubeconfig: sandbox.kubeconfigPath, namespaces: ["default"], standalone: true, webhooksUrl: "https://127.0.0.1:0" } });
  const started = Promise.withResolvers<void>();
  operator = run({ signal: stop.signal, settings, registry, logger: new Logger(memorySink("warn")), onStarted: () => started.resolve() });
  await Promise.race([started.promise, operator.then(() => { throw new Error("the operator ended before it started"); })]);
});
afterAll(async () => {
  stop.abort();
  await operator;
  await sandbox.stop();
  rmSync(dir, { recursive: true, force: true });
});

test("the example validator refuses a size of 0 with the message its comment shows", async () => {
  const response = await create("bad", { size: 0 });
  expect(response.status).toBe(400);
  expect(((await response.json()) as { message: string }).message)
    .toBe('admission webhook "size.kobun-operator.kobun.dev" denied the request: spec.size must be a whole number from 1 to 100, got 0');
});

test("the example mutator defaults a missing size to 1", async () => {
  const response = await create("defaulted", {});
  expect(response.status).toBe(201);
  expect(((await response.json()) as { spec: unknown }).spec).toEqual({ size: 1 });
});
