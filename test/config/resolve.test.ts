// Where settings come from: flags over the YAML file over defaults; kobun.yaml found in the
// current directory; an explicit --config that is missing, and YAML syntax errors with their
// line; the result deeply frozen.

import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, defaultConfigPath, findConfigFile, loadConfigFile, readConfigFile, resolveSettings } from "../../src/config/index.ts";

const dirs: string[] = [];
function tempDir(files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), "kobun-config-"));
  dirs.push(dir);
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const YAML = `
peering:
  name: blue
  priority: 10
  lifetime: 2m
logging:
  format: json
kube:
  context: from-file
watching:
  pageSize: 50
`;

describe("precedence", () => {
  test("defaults when there is no file and no flags", () => {
    const settings = resolveSettings({});
    expect(settings.peering.priority).toBe(0);
    expect(settings.watching.pageSize).toBe(500);
    expect(settings.handling).toEqual({ retries: null, backoff: 60, timeout: null, diffBaseLimit: 65536 });
    expect(settings.watching.backoff).toEqual({ initial: 0.8, max: 30, factor: 2 });
  });

  test("the file overrides defaults, flags override the file", () => {
    const file = join(tempDir({ "kobun.yaml": YAML }), "kobun.yaml");
    const settings = resolveSettings({ flags: { config: file, priority: 20, context: "from-flag", verbose: true } });
    expect(settings.peering).toMatchObject({ name: "blue", priority: 20, lifetime: 120 });
    expect(settings.kube).toEqual({ kubeconfig: null, context: "from-flag", requestTimeout: 60, http1: false });
    expect(settings.logging).toEqual({ format: "json", level: "debug" });
    expect(settings.watching.pageSize).toBe(50);
    expect(settings.watching.serverTimeout).toBe(300);
  });

  test("every flag reaches its setting", () => {
    const settings = resolveSettings({
      flags: { kubeconfig: "/k", http1: true, standalone: true, peering: "p", liveness: "http://0.0.0.0:8080/healthz", logFormat: "json", quiet: true },
    });
    expect(settings.kube.kubeconfig).toBe("/k");
    expect(settings.kube.http1).toBe(true);
    expect(settings.peering).toMatchObject({ standalone: true, name: "p" });
    expect(settings.probes.liveness).toBe("http://0.0.0.0:8080/healthz");
    expect(settings.logging).toEqual({ format: "json", level: "warn" });
  });

  test("the settings object is deeply frozen", () => {
    const settings = resolveSettings({ flags: { namespaces: ["a"] } });
    expect(Object.isFrozen(settings)).toBe(true);
    expect(Object.isFrozen(settings.peering.lease)).toBe(true);
    expect(Object.isFrozen(settings.namespaces.include)).toBe(true);
    expect(() => {
      (settings.watching.backoff as { max: number }).max = 1;
    }).toThrow();
  });
});

describe("config files", () => {
  test("kobun.yaml in the current directory is found and used", () => {
    const dir = tempDir({ "kobun.yaml": YAML });
    expect(defaultConfigPath(dir)).toBe(join(dir, "kobun.yaml"));
    expect(resolveSettings({ cwd: dir }).peering.name).toBe("blue");
  });

  test("no kobun.yaml: no file, defaults", () => {
    const dir = tempDir();
    expect(defaultConfigPath(dir)).toBeNull();
    expect(resolveSettings({ cwd: dir }).peering.name).toBe("default");
  });

  test("--config wins over the default file", () => {
    const dir = tempDir({ "kobun.yaml": YAML, "other.yaml": "peering:\n  name: green\n" });
    expect(resolveSettings({ cwd: dir, flags: { config: join(dir, "other.yaml") } }).peering.name).toBe("green");
  });

  test("an explicit --config that does not exist is an error", () => {
    const missing = join(tempDir(), "nope.yaml");
    expect(() => resolveSettings({ flags: { config: missing } })).toThrow(`${missing}: config file not found`);
  });

  test("kobun run's Bun.file forms find and read what the node:fs ones do", async () => {
    const dir = tempDir({ "kobun.yaml": YAML });
    expect(await findConfigFile(dir)).toBe(join(dir, "kobun.yaml"));
    expect(await findConfigFile(`${dir}/`)).toBe(join(dir, "kobun.yaml"));
    expect(await findConfigFile(tempDir())).toBeNull();
    const withDirectory = tempDir();
    mkdirSync(join(withDirectory, "kobun.yaml"));
    expect(await findConfigFile(withDirectory)).toBeNull();
    expect(defaultConfigPath(withDirectory)).toBeNull();
    const file = join(dir, "kobun.yaml");
    const data = await readConfigFile(file);
    expect(data).toEqual(loadConfigFile(file) as object);
    expect(resolveSettings({ file, fileData: data }).peering.name).toBe("blue");
    expect(await readConfigFile(join(tempDir({ "kobun.yaml": "# nothing yet\n" }), "kobun.yaml"))).toBeNull();
    const missing = join(tempDir(), "nope.yaml");
    await expect(readConfigFile(missing)).rejects.toThrow(`${missing}: config file not found`);
    await expect(readConfigFile(join(withDirectory, "kobun.yaml"))).rejects.toThrow("is a directory, not a config file");
  });

  test("an empty file means defaults", () => {
    const dir = tempDir({ "kobun.yaml": "# nothing yet\n" });
    expect(loadConfigFile(join(dir, "kobun.yaml"))).toBeNull();
    expect(resolveSettings({ cwd: dir }).peering.name).toBe("default");
  });

  test("YAML syntax errors carry file:line:col", () => {
    const file = join(tempDir({ "kobun.yaml": "peering:\n  name: blue\n  name: red\nwatching: [1, 2\n" }), "kobun.yaml");
    let caught: ConfigError | undefined;
    try {
      loadConfigFile(file);
    } catch (error) {
      caught = error as ConfigError;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect(caught?.file).toBe(file);
    const lines = caught?.message.split("\n") ?? [];
    expect(lines[0]).toBe(`${file}:3:3: YAML syntax error: Map keys must be unique`);
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(lines.slice(1).every((line) => line.startsWith(`${file}:`) && line.includes("YAML syntax error"))).toBe(true);
  });

  test("validation errors of a file on disk name the file as given", () => {
    const dir = tempDir({ "kobun.yaml": "workers:\n  limit: many\n" });
    expect(() => resolveSettings({ cwd: dir })).toThrow(`${join(dir, "kobun.yaml")}:2: workers.limit: expected an integer from 1 to 100000, got "many"`);
  });

  test("kube.http1 takes only true or false", () => {
    const dir = tempDir({ "kobun.yaml": "kube:\n  http1: sometimes\n" });
    expect(() => resolveSettings({ cwd: dir })).toThrow(`${join(dir, "kobun.yaml")}:2: kube.http1: expected true or false, got "sometimes"`);
  });
});

test("webhooks.clientCertRequired needs webhooks.clientCaFile, the CA it verifies against", () => {
  expect(() => resolveSettings({ fileData: { webhooks: { clientCertRequired: true } } }))
    .toThrow("webhooks.clientCertRequired: expected webhooks.clientCaFile too: client certificates are verified against it");
  const settings = resolveSettings({ fileData: { webhooks: { clientCaFile: "/etc/ca.pem", clientCertRequired: true } } });
  expect([settings.webhooks.clientCaFile, settings.webhooks.clientCertRequired]).toEqual(["/etc/ca.pem", true]);
  expect([resolveSettings().webhooks.clientCaFile, resolveSettings().webhooks.clientCertRequired]).toEqual([null, false]);
});
