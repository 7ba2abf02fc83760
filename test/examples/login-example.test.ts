// The commented-out login example in handlers/login.ts, uncommented and run against a sandbox
// that wants a bearer token (over TLS, its CA in the files): the operator gets in with the
// files' token although its kubeconfig's is refused, and after the token is revoked and the file
// rewritten, the next 401 makes it read the files again and go on.

import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveSettings } from "../../src/config/index.ts";
import type { Registry } from "../../src/declaring/registry.ts";
import { run } from "../../src/runtime/operator.ts";
import { startSandbox } from "@kobun/sandbox";
import { testLogger } from "../peering/helpers.ts";
import { eventually } from "../runtime/helpers.ts";

const repo = join(import.meta.dir, "../..");
const FIRST = '// import { existsSync, readFileSync } from "node:fs";';
const dir = mkdtempSync(join(tmpdir(), "kobun-login-example-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The example's code without its comment marks, reading its files from `files`, registering into a registry of its own. */
async function loadUncommented(files: string): Promise<Registry> {
  const text = readFileSync(join(repo, "handlers/login.ts"), "utf8");
  const start = text.indexOf(FIRST);
  expect(start).toBeGreaterThan(0);
  const code = text.slice(start).split("\n").filter((l) => l.startsWith("//")).map((l) => l.replace(/^\/\/ ?/, "")).join("\n")
    .replace('import { on } from "kobun";', `import { Registry } from ${JSON.stringify(join(repo, "src/declaring/registry.ts"))};\nexport const registry = new Registry();\nconst on = registry.on;`)
    .replace('"/var/run/secrets/operator"', JSON.stringify(files));
  expect(code).toContain(JSON.stringify(files));
  const file = join(dir, "login-example.ts");
  writeFileSync(file, code);
  return ((await import(file)) as { registry: Registry }).registry;
}

test("the example login reads server, CA and token from its files, and reads them again after a 401", async () => {
  const sandbox = await startSandbox({ tls: true, auth: "token" });
  const adminToken: string = (Bun.YAML.parse(sandbox.kubeconfig) as any).users[0].user.token;
  const admin = async (method: string, path: string, body?: unknown): Promise<any> => {
    const response = await fetch(sandbox.url + path, {
      method, tls: { ca: sandbox.ca! },
      headers: { authorization: `Bearer ${adminToken}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return response.json();
  };
  try {
    // A kubeconfig the sandbox refuses: only the login gets the operator in.
    const refused = join(dir, "refused.yaml");
    writeFileSync(refused, sandbox.kubeconfig.replace(adminToken, "refused"), { mode: 0o600 });
    await admin("POST", "/api/v1/namespaces/default/serviceaccounts", { metadata: { name: "op" } });
    await admin("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
      metadata: { name: "op" }, roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
      subjects: [{ kind: "ServiceAccount", name: "op", namespace: "default" }],
    });
    await admin("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", { metadata: { name: "cluster-admin" }, rules: [{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }] });
    const files = join(dir, "operator");
    mkdirSync(files);
    const issued = await admin("POST", "/api/v1/namespaces/default/serviceaccounts/op/token", { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: {} });
    writeFileSync(join(files, "server"), `${sandbox.url}\n`);
    writeFileSync(join(files, "ca.crt"), sandbox.ca!);
    writeFileSync(join(files, "token"), `${issued.status.token}\n`);

    const registry = await loadUncommented(files);
    const handled: string[] = [];
    registry.on.create("v1/configmaps", ({ name }) => {
      handled.push(name);
    }, { id: "see", labels: { scenario: "login-example" } });
    const { logger, lines } = testLogger();
    const stop = new AbortController();
    const operator = run({ signal: stop.signal, registry, logger, settings: resolveSettings({ flags: { kubeconfig: refused, namespaces: ["default"], standalone: true } }) });
    const configMap = (name: string) => admin("POST", "/api/v1/namespaces/default/configmaps", { metadata: { name, labels: { scenario: "login-example" } } });
    try {
      await configMap("first");
      await eventually(() => handled.includes("first"), "the handler, logged in with the files' token");
      // The token is revoked (its ServiceAccount recreated) and the file rewritten, as a sidecar would.
      await admin("DELETE", "/api/v1/namespaces/default/serviceaccounts/op");
      await admin("POST", "/api/v1/namespaces/default/serviceaccounts", { metadata: { name: "op" } });
      const renewed = await admin("POST", "/api/v1/namespaces/default/serviceaccounts/op/token", { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: {} });
      writeFileSync(join(files, "token"), `${renewed.status.token}\n`);
      await configMap("second");
      // The handler's write (the progress annotation) is what meets the 401 and the renewed login.
      await eventually(() => handled.includes("second") && lines.some((l) => l.includes("reading it again")), "the handler after the renewed login");
      await eventually(() => sandbox.store.get("", "configmaps", "default", "second")?.metadata.annotations !== undefined, "the write after the renewal");
    } finally {
      stop.abort();
      await operator;
    }
    expect(lines.join("\n")).not.toContain(issued.status.token);
  } finally {
    await sandbox.stop();
  }
});
