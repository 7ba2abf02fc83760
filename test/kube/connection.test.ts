// Connections: kubeconfig users of every kind (token, token-file, basic, client certificate,
// exec plugin), TLS, in-cluster service accounts with rotating tokens, and clear failures.
// Only explicit kubeconfig paths and temp dirs: never KUBECONFIG, ~/.kube or the real
// service-account directory.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { ApiError, connect, ConnectionError, KubeClient, KubeconfigError, type Resource } from "../../src/kube/index.ts";
import { Logger, memorySink } from "../../src/util/log.ts";

const NS: Resource = { group: "", version: "v1", plural: "namespaces", kind: "Namespace", namespaced: false, statusSubresource: true };
const TOKEN = "tls-sandbox-token-0123456789";

let tlsToken: Sandbox;
let tlsCert: Sandbox;
let dir: string;
const sink = memorySink("debug");
const logger = new Logger(sink);

beforeAll(async () => {
  [tlsToken, tlsCert] = await Promise.all([startSandbox({ tls: true, token: TOKEN }), startSandbox({ tls: true, clientCA: true })]);
  dir = mkdtempSync(join(tmpdir(), "kobun-kube-test-"));
});
afterAll(async () => {
  await Promise.all([tlsToken.stop(), tlsCert.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

/** The sandbox's kubeconfig with the user (and optionally the cluster) replaced. */
function variant(sb: Sandbox, user: Record<string, unknown>, cluster?: Record<string, unknown>): any {
  const doc = parse(sb.kubeconfig);
  doc.users[0].user = user;
  if (cluster) doc.clusters[0].cluster = { ...doc.clusters[0].cluster, ...cluster };
  return doc;
}

function writeConfig(name: string, doc: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, stringify(doc));
  return path;
}

describe("kubeconfig users", () => {
  test("TLS with a bearer token", async () => {
    const client = await KubeClient.connect({ kubeconfig: tlsToken.kubeconfigPath, logger });
    expect(client.connection.authKind).toBe("token");
    expect(client.connection.namespace).toBe("default");
    const list = await client.list(NS);
    expect(list.items.map((o) => o.metadata.name)).toContain("default");
    expect(client.connection.describe()).toBe(`server=${tlsToken.url} context=sandbox user=sandbox auth=token`);
    client.close();
  });

  test("TLS with a client certificate", async () => {
    const client = await KubeClient.connect({ kubeconfig: tlsCert.kubeconfigPath });
    expect(client.connection.authKind).toBe("client-certificate");
    expect((await client.get(NS, null, "default")).metadata.name).toBe("default");
    client.close();
  });

  test("files relative to the kubeconfig's directory: CA, client certificate and key, token-file", async () => {
    writeFileSync(join(dir, "ca.pem"), tlsCert.ca!);
    writeFileSync(join(dir, "client.pem"), tlsCert.clientCert!.cert);
    writeFileSync(join(dir, "client.key"), tlsCert.clientCert!.key);
    const certPath = writeConfig(
      "rel-cert.yaml",
      variant(tlsCert, { "client-certificate": "client.pem", "client-key": "client.key" }, { "certificate-authority-data": undefined, "certificate-authority": "ca.pem" }),
    );
    const certClient = await KubeClient.connect({ kubeconfig: certPath });
    expect((await certClient.list(NS)).items.length).toBeGreaterThan(0);

    writeFileSync(join(dir, "token.txt"), `${TOKEN}\n`);
    const tokenPath = writeConfig("rel-token.yaml", variant(tlsToken, { "token-file": "token.txt" }));
    const tokenClient = await KubeClient.connect({ kubeconfig: tokenPath });
    expect(tokenClient.connection.authKind).toBe("token-file");
    expect((await tokenClient.list(NS)).items.length).toBeGreaterThan(0);
  });

  test("kubeconfigText and an explicit context", async () => {
    const doc = parse(tlsToken.kubeconfig);
    doc.contexts.push({ name: "other", context: { cluster: "sandbox", user: "sandbox", namespace: "kube-system" } });
    const connection = await connect({ kubeconfigText: stringify(doc), context: "other" });
    expect(connection.namespace).toBe("kube-system");
    expect(connection.describe()).toContain("context=other");
  });

  test("a wrong token fails clearly, naming the server and user, never the token", async () => {
    const path = writeConfig("wrong.yaml", variant(tlsToken, { token: "wrong-token-abcdef" }));
    const client = await KubeClient.connect({ kubeconfig: path, logger });
    const error = (await client.list(NS).catch((e) => e)) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect(error.code).toBe(401);
    expect(error.status.reason).toBe("Unauthorized");
    expect(error.message).toStartWith(`authentication failed against ${tlsToken.url} as sandbox (token): `);
    expect(error.message).not.toContain("wrong-token-abcdef");
  });

  test("basic auth sends username:password", async () => {
    let seen = "";
    const server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch(req) {
        seen = req.headers.get("authorization") ?? "";
        return Response.json({ kind: "APIVersions", versions: ["v1"] });
      },
    });
    try {
      const text = JSON.stringify({
        clusters: [{ name: "c", cluster: { server: server.url.href } }],
        users: [{ name: "admin", user: { username: "admin", password: "pa55" } }],
        contexts: [{ name: "x", context: { cluster: "c", user: "admin" } }],
        "current-context": "x",
      });
      const client = await KubeClient.connect({ kubeconfigText: text });
      expect(client.connection.authKind).toBe("basic");
      expect(client.connection.describe()).not.toContain("pa55");
      await client.request("GET", "/api");
      expect(seen).toBe(`Basic ${Buffer.from("admin:pa55").toString("base64")}`);
    } finally {
      server.stop(true);
    }
  });

  test("an untrusted server certificate is a ConnectionError, not retried", async () => {
    const path = writeConfig("untrusted.yaml", variant(tlsToken, { token: TOKEN }, { "certificate-authority-data": undefined }));
    const client = await KubeClient.connect({ kubeconfig: path, retries: 3, backoff: { initialMs: 200, maxMs: 200 } });
    const started = performance.now();
    const error = await client.list(NS).catch((e) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(error.message).toContain("TLS");
    expect(performance.now() - started).toBeLessThan(150);
  });

  test("insecure-skip-tls-verify accepts it", async () => {
    const path = writeConfig("insecure.yaml", variant(tlsToken, { token: TOKEN }, { "certificate-authority-data": undefined, "insecure-skip-tls-verify": true }));
    const client = await KubeClient.connect({ kubeconfig: path });
    expect((await client.list(NS)).items.length).toBeGreaterThan(0);
  });

  test("bad kubeconfigs fail with precise messages", async () => {
    await expect(connect({ kubeconfig: join(dir, "missing.yaml") })).rejects.toThrow(/cannot read kubeconfig .*missing\.yaml/);
    await expect(connect({ kubeconfig: tlsToken.kubeconfigPath, context: "nope" })).rejects.toThrow('context "nope" not found in kubeconfig');
    await expect(connect({ kubeconfigText: "clusters: [" })).rejects.toBeInstanceOf(KubeconfigError);
    const noServer = { ...parse(tlsToken.kubeconfig), clusters: [{ name: "sandbox", cluster: {} }] };
    await expect(connect({ kubeconfigText: stringify(noServer) })).rejects.toThrow("clusters[0].cluster.server is missing");
    const noCluster = { ...parse(tlsToken.kubeconfig), contexts: [{ name: "sandbox", context: { user: "sandbox" } }] };
    await expect(connect({ kubeconfigText: stringify(noCluster) })).rejects.toThrow("contexts[0].context.cluster is missing");
    const slashed = parse(tlsToken.kubeconfig);
    slashed.clusters[0].cluster.server += "/";
    expect((await connect({ kubeconfigText: stringify(slashed) })).describe()).toContain(`server=${tlsToken.url} `);
    await expect(connect({})).rejects.toThrow(/needs one of/);
  });
});

describe("exec plugins and auth providers", () => {
  test("runs the plugin, uses its token, re-runs it after a 401", async () => {
    const tokenFile = join(dir, "exec-token");
    const counter = join(dir, "exec-count");
    const script = join(dir, "exec-plugin.sh");
    writeFileSync(tokenFile, "stale-token");
    writeFileSync(counter, "");
    writeFileSync(
      script,
      `#!/bin/sh
echo x >> "${counter}"
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}' "$(cat "${tokenFile}")"
`,
    );
    chmodSync(script, 0o755);
    const path = writeConfig(
      "exec.yaml",
      variant(tlsToken, { exec: { apiVersion: "client.authentication.k8s.io/v1", command: "./exec-plugin.sh", interactiveMode: "Never" } }),
    );
    const client = await KubeClient.connect({ kubeconfig: path, logger });
    expect(client.connection.authKind).toBe("exec");
    writeFileSync(tokenFile, TOKEN); // the plugin would now hand out a fresh token
    expect((await client.list(NS)).items.length).toBeGreaterThan(0);
    expect(Bun.file(counter).size).toBe(4); // two runs: at connect, and after the 401
    expect((await client.get(NS, null, "default")).metadata.name).toBe("default");
    expect(Bun.file(counter).size).toBe(4); // cached since
  });

  test("a credential about to expire is fetched again before use", async () => {
    const counter = join(dir, "exec-expiring-count");
    const script = join(dir, "exec-expiring.sh");
    writeFileSync(counter, "");
    // Expires within the refresh margin (10 s): every use must run the plugin again.
    writeFileSync(
      script,
      `#!/bin/sh
echo x >> "${counter}"
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"${TOKEN}","expirationTimestamp":"%s"}}' "$(date -u -d @$(( $(date +%s) + 5 )) +%Y-%m-%dT%H:%M:%SZ)"
`,
    );
    chmodSync(script, 0o755);
    const path = writeConfig("exec-expiring.yaml", variant(tlsToken, { exec: { apiVersion: "client.authentication.k8s.io/v1", command: script, interactiveMode: "Never" } }));
    const client = await KubeClient.connect({ kubeconfig: path });
    await client.list(NS);
    await client.list(NS);
    expect(Bun.file(counter).size).toBe(6); // connect + two requests
  });

  test("a legacy auth-provider goes through client-node's KubeConfig, loaded lazily", async () => {
    const script = join(dir, "provider-plugin.sh");
    writeFileSync(script, `#!/bin/sh\nprintf '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"${TOKEN}"}}'\n`);
    chmodSync(script, 0o755);
    // client-node's ExecAuth serves an auth-provider whose config carries an exec stanza.
    const path = writeConfig("provider.yaml", variant(tlsToken, { "auth-provider": { name: "exec", config: { exec: { command: script, args: [] } } } }));
    const client = await KubeClient.connect({ kubeconfig: path });
    expect(client.connection.authKind).toBe("auth-provider");
    expect((await client.list(NS)).items.length).toBeGreaterThan(0);
    expect(Object.keys(require.cache).some((k) => k.endsWith("client-node/dist/config.js"))).toBe(true);
  }, 30_000); // loading client-node takes ~3.5 s here unloaded, over 5 s on a busy machine

  test("a failing plugin is reported with its command", async () => {
    const path = writeConfig("exec-bad.yaml", variant(tlsToken, { exec: { apiVersion: "client.authentication.k8s.io/v1", command: "/bin/false", interactiveMode: "Never" } }));
    await expect(connect({ kubeconfig: path })).rejects.toThrow(/exec plugin "\/bin\/false" of user "sandbox" failed/);
  });
});

test("token and exec users never load client-node's KubeConfig (dist/config.js)", async () => {
  const script = join(dir, "probe-plugin.sh");
  writeFileSync(script, `#!/bin/sh\nprintf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"${TOKEN}"}}'\n`);
  chmodSync(script, 0o755);
  const execConfig = writeConfig("probe-exec.yaml", variant(tlsToken, { exec: { apiVersion: "client.authentication.k8s.io/v1", command: script, interactiveMode: "Never" } }));
  const probe = `
    const { KubeClient } = await import(${JSON.stringify(join(import.meta.dir, "../../src/kube/index.ts"))});
    const client = await KubeClient.connect({ kubeconfig: process.argv[1] });
    const exec = await KubeClient.connect({ kubeconfig: process.argv[2] });
    await exec.request("GET", "/api");
    const list = await client.request("GET", "/api/v1/namespaces");
    const loaded = Object.keys(require.cache);
    console.log(JSON.stringify({ items: list.items.length, config: loaded.some((k) => k.endsWith("client-node/dist/config.js")) }));
  `;
  const child = Bun.spawn([process.execPath, "-e", probe, tlsToken.kubeconfigPath, execConfig], { stdout: "pipe", stderr: "pipe" });
  const [out, err] = [await new Response(child.stdout).text(), await new Response(child.stderr).text()];
  expect(await child.exited).toBe(0);
  expect(err).toBe("");
  // the sandbox's namespaces, as kube-apiserver makes them: default, kube-node-lease, kube-public, kube-system
  expect(JSON.parse(out)).toEqual({ items: 4, config: false });
});

describe("in-cluster", () => {
  test("reads token, ca.crt and namespace; re-reads a rotated token after a 401", async () => {
    const sa = mkdtempSync(join(dir, "sa-"));
    writeFileSync(join(sa, "token"), "old-bound-token");
    writeFileSync(join(sa, "ca.crt"), tlsToken.ca!);
    writeFileSync(join(sa, "namespace"), "kube-system\n");
    const client = await KubeClient.connect({ inCluster: true, serviceAccountDir: `${sa}/`, server: tlsToken.url, logger });
    expect(client.connection.authKind).toBe("service-account");
    expect(client.connection.namespace).toBe("kube-system");
    expect(client.connection.describe()).toBe(`server=${tlsToken.url} user=serviceaccount auth=service-account`);

    writeFileSync(join(sa, "token"), TOKEN); // the kubelet rotated it
    tlsToken.stats.reset();
    expect((await client.list(NS)).items.length).toBeGreaterThan(0);
    expect(tlsToken.stats.requests("list")).toBe(2); // 401, then success with the new token
    expect(sink.lines.some((l) => l.includes("re-reading credentials after 401"))).toBe(true);
  });

  test("without KUBERNETES_SERVICE_HOST or a server, or without a token file, it says so", async () => {
    const empty = mkdtempSync(join(dir, "sa-empty-"));
    await expect(connect({ inCluster: true, serviceAccountDir: empty, server: tlsToken.url })).rejects.toThrow(/no service-account token/);
  });
});

test("no log line carries a token", () => {
  expect(sink.lines.length).toBeGreaterThan(0);
  for (const line of sink.lines) {
    for (const secret of [TOKEN, "old-bound-token", "stale-token", "wrong-token-abcdef"]) expect(line).not.toContain(secret);
  }
});
