// Issue 30: a webhook handler named the Kopf way (`function validate_size`) stopped the operator
// at start-up with an uncaught exception, a Bun stack trace and the runtime's banner. Its id is
// now made from the name as a DNS label (`validate-size`); an explicit id that cannot be one,
// like every registration that cannot work, is one line naming the handler and the fix, exit 3
// (README "Exit codes") — from source (`kobun manifests handlers/`) and from a compiled operator,
// whose handler modules load before its CLI.

import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { build, KOBUN_ROOT } from "../../../src/cli/project/build.ts";
import { Registry } from "../../../src/declaring/registry.ts";
import { RegistrationError } from "../../../src/declaring/registration.ts";

const work = mkdtempSync(join(tmpdir(), "kobun-registration-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const env = { PATH: process.env.PATH ?? "", HOME: "/nonexistent" };

/** A handlers/ directory holding one module with this body (after `import { on } from "kobun"`), and the example CRD. */
function handlersDir(name: string, body: string): string {
  const dir = join(work, name, "handlers");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "webhooks.ts"), `import { on } from ${JSON.stringify(join(KOBUN_ROOT, "src/index.ts"))};\n${body}\n`);
  writeFileSync(join(dir, "kobunexample.crd.yaml"), readFileSync(join(KOBUN_ROOT, "handlers/kobunexample.crd.yaml"), "utf8"));
  return dir;
}

function manifestsFromSource(dir: string) {
  const result = Bun.spawnSync([process.execPath, join(KOBUN_ROOT, "src/cli.ts"), "manifests", "--name", "op", dir], { cwd: work, env });
  return { code: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() };
}

const BAD_ID = `on.validate("kobunexamples.kobun.dev", () => {}, { id: "Size_Check" });`;
const BAD_ID_LINE = 'kobun: invalid handler registration: on.validate handler "Size_Check": the id must be lowercase letters, digits and "-", at most 63 (it names the webhook): pass { id: "size-check" }\n';

test("a webhook's id made from a Kopf-style or camelCase function name is a DNS label", () => {
  const registry = new Registry();
  registry.on.validate("kobunexamples.kobun.dev", function validate_size() {});
  registry.on.mutate("kobunexamples.kobun.dev", function setDefaults() {});
  registry.on.validate("kobunexamples.kobun.dev", function __() {});
  expect(registry.webhooks.map((w) => w.id)).toEqual(["validate-size", "set-defaults", "validate-2"]);
});

test("an explicit webhook id that is no DNS label is a RegistrationError naming the handler and the id to pass", () => {
  const registry = new Registry();
  let thrown: unknown;
  try {
    registry.on.validate("kobunexamples.kobun.dev", () => {}, { id: "Size_Check" });
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(RegistrationError);
  expect((thrown as Error).message).toBe(BAD_ID_LINE.slice("kobun: invalid handler registration: ".length, -1));
});

test("kobun manifests with a webhook handler named validate_size names its webhook validate-size", () => {
  const { code, stdout, stderr } = manifestsFromSource(handlersDir("kopf-name", `on.validate("kobunexamples.kobun.dev", function validate_size() {});`));
  expect(stderr).toBe("");
  expect(code).toBe(0);
  const configuration = parseAllDocuments(stdout).map((d) => d.toJS()).find((d) => d?.kind === "ValidatingWebhookConfiguration");
  expect(configuration.webhooks.map((w: any) => w.name)).toEqual(["validate-size.op.kobun.dev"]);
});

test("a registration error while loading handlers from source is one line and exit 3", () => {
  expect(manifestsFromSource(handlersDir("bad-id-source", BAD_ID))).toEqual({ code: 3, stdout: "", stderr: BAD_ID_LINE });
  const duplicate = manifestsFromSource(handlersDir("duplicate-source", `on.create("kex", function hello() {});\non.create("kex", function hello() {});`));
  expect(duplicate).toEqual({ code: 3, stdout: "", stderr: 'kobun: invalid handler registration: a create handler with id "hello" is already registered for kex: pass a distinct { id }\n' });
});

test("a resource declared wrongly in a handler module (defineResource, resource() with an alias) is one line and exit 3", () => {
  const defined = manifestsFromSource(handlersDir("bad-definition", `import { defineResource } from ${JSON.stringify(join(KOBUN_ROOT, "src/index.ts"))};\ndefineResource({ group: "example.com", kind: "Thing", plural: "Things", schema: { spec: {} as never } });`));
  expect(defined.code).toBe(3);
  expect(defined.stderr).toMatch(/^kobun: invalid handler registration: .*plural must be lowercase, like "kobunexamples"\n$/);
  const aliased = manifestsFromSource(handlersDir("bad-alias", `import { resource } from ${JSON.stringify(join(KOBUN_ROOT, "src/index.ts"))};\nresource("kobunexamples.kobun.dev/v1", { alias: "my examples" });`));
  expect(aliased).toEqual({ code: 3, stdout: "", stderr: 'kobun: invalid handler registration: resource("kobunexamples.kobun.dev/v1", { alias: "my examples" }): an alias is letters, digits, "-", "_" and "." (like "examples")\n' });
});

test("a compiled operator whose handler module fails to register says so in one line, exit 3, no stack trace", async () => {
  const dir = handlersDir("bad-id-binary", BAD_ID);
  // Built with a --target (this machine's): kobun build then does not start the binary, which it would
  // refuse (test/cli/project/build-starts.test.ts); one built for a platform elsewhere meets the same.
  const target = `bun-${process.platform}-${process.arch}`;
  const { outfile } = await build({ cwd: join(dir, ".."), handlers: "handlers", outfile: join(work, "bad-id-binary", "op"), target });
  for (const args of [["run", "--kubeconfig", "/nonexistent"], ["manifests"]]) {
    const result = Bun.spawnSync([outfile, ...args], { cwd: work, env });
    expect({ code: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() }).toEqual({ code: 3, stdout: "", stderr: BAD_ID_LINE });
  }
}, 120_000);
