// docs/configuration.md and the README's exit codes, as a user meets them: durations in every
// documented spelling, a bad file refused with every problem named by file and key (exit 3 from the
// CLI), flags over the file, Kopf's --dev priority, and the README's first command (the demo).

import { expect, test } from "bun:test";
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, Registry, resolveSettings } from "kobun";
import { startOperator } from "kobun/testing";
import { root, scratchDir, within } from "./helpers.ts";

const cli = join(root, "src", "cli.ts");

async function kobun(args: string[], cwd = root): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = Bun.spawn([process.execPath, cli, ...args], { cwd, stdout: "pipe", stderr: "pipe", env: { ...process.env, KUBECONFIG: "/nonexistent" } });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, stdout, stderr };
}

test("durations are 500ms, 5s, 1m, 2h or a bare number of seconds; flags override the file", () => {
  const settings = resolveSettings({
    fileData: { workers: { batchWindow: "500ms" }, handling: { backoff: 90, timeout: "2h" }, logging: { level: "warn" } },
    flags: { standalone: true, verbose: true } as never,
  });
  expect(settings.workers.batchWindow).toBe(0.5);
  expect(settings.handling.backoff).toBe(90);
  expect(settings.handling.timeout).toBe(7200);
  expect(settings.logging.level).toBe("debug");                // -v over the file's warn
  expect(resolveSettings({ fileData: { handling: { backoff: "1m" } } }).handling.backoff).toBe(60);
});

test("./kobun.yaml is read when it exists; OTEL_* variables override the file's tracing, a bad one named; OTEL_SDK_DISABLED", () => {
  const dir = scratchDir();
  try {
    writeFileSync(join(dir, "kobun.yaml"), "workers: { limit: 7 }\n");
    expect(resolveSettings({ cwd: dir }).workers.limit).toBe(7);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const traced = resolveSettings({ fileData: { tracing: { serviceName: "a", endpoint: "http://x:4318" } }, env: { OTEL_SERVICE_NAME: "b" } });
  expect(traced.tracing).toMatchObject({ serviceName: "b", endpoint: "http://x:4318" });
  expect(() => resolveSettings({ env: { OTEL_TRACES_SAMPLER: "sometimes" } })).toThrow(/OTEL_TRACES_SAMPLER: expected one of/);
  expect(resolveSettings({ env: { OTEL_SDK_DISABLED: "true", OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318" } }).tracing.endpoint).toBeNull();
});

test("Kopf's --dev is priority 666", () => {
  expect(resolveSettings({ flags: { dev: true, standalone: false } as never }).peering.priority).toBe(666);
});

test("resolveSettings throws one ConfigError listing every problem with its key", () => {
  let error: unknown;
  try {
    resolveSettings({ fileData: { workers: { limit: -1, bogus: 2 }, handling: { backoff: "abc" } } });
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(ConfigError);
  const message = (error as ConfigError).message;
  for (const key of ["workers.limit", "workers.bogus", "handling.backoff"]) expect(message).toContain(key);
});

test("the CLI: bad usage (kobun test --simulate=abc too) exits 2, a bad kobun.yaml 3 (every problem, file and key), a bad registration or webhook id 3, no API server 4", async () => {
  const dir = scratchDir();
  try {
    writeFileSync(join(dir, "bad.yaml"), "workers: { limit: -1, bogus: 2 }\nlogging: { level: loud }\n");
    mkdirSync(join(dir, "wrong"));
    writeFileSync(join(dir, "wrong", "a.ts"), 'import { on } from "kobun";\non.create("v1/configmaps", () => {}, { id: "x", retries: 0 });\n');
    mkdirSync(join(dir, "webhook"));
    writeFileSync(join(dir, "webhook", "a.ts"), 'import { on } from "kobun";\non.validate("v1/configmaps", () => {}, { id: "validate_size" });\n');
    mkdirSync(join(dir, "right"));
    writeFileSync(join(dir, "right", "a.ts"), 'import { on } from "kobun";\non.create("v1/configmaps", () => {}, { id: "x" });\n');
    writeFileSync(join(dir, "closed.kubeconfig"), [
      "apiVersion: v1", "kind: Config", "current-context: c",
      "clusters: [{ name: c, cluster: { server: 'http://127.0.0.1:1' } }]",
      "users: [{ name: u, user: { token: t } }]", "contexts: [{ name: c, context: { cluster: c, user: u } }]", "",
    ].join("\n"));
    const run = (handlers: string) => ["run", join(dir, handlers), "--kubeconfig", join(dir, "closed.kubeconfig"), "-n", "default", "--standalone"];
    const [unknown, flag, missing, config, registration, webhook, unreachable, budget] = await Promise.all([
      kobun(["bogus"]), kobun(["run", "--bogus"]), kobun(["run", "-n"]),
      kobun(["run", "--config", join(dir, "bad.yaml"), "--standalone"]), kobun(run("wrong")),
      kobun([...run("webhook"), "--webhooks-listen", "127.0.0.1:0"]), kobun(run("right")), kobun(["test", "--simulate=abc"]),
    ]);
    expect(budget.code).toBe(2);     // testing.md: kobun test --simulate=N, N a positive whole number
    expect(budget.stderr).toContain("must be a positive whole number");
    expect(webhook.code).toBe(3);   // README: a webhook id that is not a DNS label, naming the id to pass instead
    expect(webhook.stderr).toContain('pass { id: "validate-size" }');
    expect(registration.code).toBe(3);
    expect(registration.stderr).toContain("handler x: retries must be");
    expect(unreachable.code).toBe(4);
    expect(unreachable.stderr).toContain("cannot connect to the API server");
    expect([unknown.code, flag.code, missing.code]).toEqual([2, 2, 2]);
    expect(unknown.stderr).toContain('unknown command "bogus"');
    expect(flag.stderr).toContain("unknown flag --bogus");
    expect(missing.stderr).toContain("-n needs a value");
    expect(config.code).toBe(3);
    for (const key of ["bad.yaml:1: workers.bogus", "bad.yaml:1: workers.limit", "bad.yaml:2: logging.level"]) expect(config.stderr).toContain(key);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 30_000);

test("kobun docs lists every guide of this kobun (docs/ in the package); kobun version and --help exit 0", async () => {
  const [docs, version, help] = await Promise.all([kobun(["docs"]), kobun(["version"]), kobun(["--help"])]);
  expect([docs.code, version.code, help.code]).toEqual([0, 0, 0]);
  const guides = readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md") && f !== "README.md");
  for (const guide of guides) expect(docs.stdout).toContain(join(root, "docs", guide));
  const pkg = await Bun.file(join(root, "package.json")).json() as { version: string };
  expect(version.stdout).toStartWith(`kobun ${pkg.version}`);
}, 30_000);

test("README's first command: `kobun dev --once` runs the demo (create, update, delete) against the sandbox and exits 0", async () => {
  const { code, stdout } = await kobun(["dev", "--once"]);
  expect(code).toBe(0);
  expect(stdout).toMatch(/demo: created KobunExample\/kobun-demo: status=.*"create_fn":\{"message":"hello kobun-demo"\}/);
  expect(stdout).toMatch(/demo: updated KobunExample\/kobun-demo: .*"update_fn"/);
  expect(stdout).toContain("demo: deleted KobunExample/kobun-demo: gone (finalizer released)");
  expect(stdout).toMatch(/kubectl --kubeconfig \S+kubeconfig\.yaml/);
}, 60_000);

test("resources: enabled: false leaves a resource unwatched (its index empty, a warning names it); a labelSelector filters the watch", async () => {
  const dir = scratchDir();
  try {
    const file = join(dir, "kobun.yaml");
    writeFileSync(file, "resources:\n  secrets: { enabled: false }\n  configmaps: { labelSelector: 'app=web' }\n");
    const registry = new Registry();
    registry.on.index("v1/secrets", ({ name }) => ({ [name]: name }), { id: "byName" });
    registry.on.create("v1/configmaps", ({ indexes, patch }) => {
      patch.metadata.labels = { app: "web", indexed: String(indexes.byName?.size) };
    }, { id: "c" });
    await using kit = await startOperator({ registry, logLevel: "silent", flags: { config: file }, timeout: 15_000 });
    expect(kit.logs.lines.some((l) => l.includes("an index stays empty") && l.includes("resources.secrets.enabled"))).toBe(true);
    await kit.apply("v1/secrets", { metadata: { name: "s" }, type: "Opaque" });
    await kit.apply("v1/configmaps", { metadata: { name: "web", labels: { app: "web" } } });
    await kit.apply("v1/configmaps", { metadata: { name: "other" } });
    expect((await kit.until("v1/configmaps", "web", (o) => o.metadata.labels?.indexed)).metadata.labels?.indexed).toBe("0");
    await kit.consistently("v1/configmaps", "other", (o) => !o?.metadata.labels?.indexed, { for: 300 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 30_000);

test("`npm start` (kobun dev --demo) keeps running after the demo, serves kubectl's kubeconfig, and Ctrl+C stops it with 0", async () => {
  const child = Bun.spawn([process.execPath, cli, "dev", "--demo"], { cwd: root, stdout: "pipe", stderr: "pipe" });
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  const demoDone = (async () => {
    while (!out.includes("demo: deleted")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`kobun dev ended before its demo did: ${out}`);
      out += value;
    }
  })();
  try {
    await within(demoDone, 30_000, "the demo");
    const kubeconfig = out.match(/--kubeconfig (\S+kubeconfig\.yaml)/)?.[1];
    expect(await Bun.file(kubeconfig!).text()).toContain("server: ");
    expect(child.exitCode).toBeNull();                      // still running
    child.kill("SIGINT");
    expect(await within(child.exited, 15_000, "the exit after SIGINT")).toBe(0);
  } finally {
    child.kill("SIGKILL");
  }
}, 60_000);
