// HTTPS with a generated CA, bearer tokens (401 otherwise), client certificates verified by
// the TLS layer, and the kubeconfig the sandbox writes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { parse } from "yaml";
import { startSandbox, type Sandbox } from "../src/index.ts";

let tok: Sandbox;
let cert: Sandbox;
beforeAll(async () => {
  tok = await startSandbox({ tls: true, token: "t0ken" });
  cert = await startSandbox({ tls: true, clientCA: true });
});
afterAll(async () => { await tok.stop(); await cert.stop(); });

describe("TLS + token", () => {
  test("https URL on 127.0.0.1; right token → 200; wrong/missing token → 401 Status", async () => {
    expect(tok.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const ok = await fetch(`${tok.url}/api/v1/namespaces`, { tls: { ca: tok.ca }, headers: { authorization: "Bearer t0ken" } });
    expect(ok.status).toBe(200);
    for (const headers of [{ authorization: "Bearer wrong" }, {} as Record<string, string>]) {
      const r = await fetch(`${tok.url}/api/v1/namespaces`, { tls: { ca: tok.ca }, headers });
      expect(r.status).toBe(401);
      expect(await r.json()).toMatchObject({ kind: "Status", status: "Failure", reason: "Unauthorized", code: 401 });
    }
    // the server certificate does not verify without the sandbox CA
    await expect(fetch(`${tok.url}/version`)).rejects.toThrow();
  });

  test("kubeconfig: context sandbox, CA data, token; removed on stop", async () => {
    const kc = parse(readFileSync(tok.kubeconfigPath, "utf8"));
    expect(tok.kubeconfig).toBe(readFileSync(tok.kubeconfigPath, "utf8"));
    expect(kc["current-context"]).toBe("sandbox");
    expect(kc.contexts[0]).toEqual({ name: "sandbox", context: { cluster: "sandbox", user: "sandbox", namespace: "default" } });
    expect(kc.clusters[0].cluster.server).toBe(tok.url);
    expect(Buffer.from(kc.clusters[0].cluster["certificate-authority-data"], "base64").toString()).toBe(tok.ca!);
    expect(kc.users[0].user).toEqual({ token: "t0ken" });
    const extra = await startSandbox();
    expect(existsSync(extra.kubeconfigPath)).toBe(true);
    expect(parse(extra.kubeconfig).clusters[0].cluster["certificate-authority-data"]).toBeUndefined();
    await extra.stop();
    expect(existsSync(extra.kubeconfigPath)).toBe(false);
  });
});

describe("client certificates", () => {
  test("a CA-signed client certificate authenticates; no certificate → handshake refused", async () => {
    const c = cert.clientCert!;
    const ok = await fetch(`${cert.url}/api/v1/namespaces/default`, { tls: { ca: cert.ca, cert: c.cert, key: c.key } });
    expect(ok.status).toBe(200);
    await expect(fetch(`${cert.url}/api/v1/namespaces/default`, { tls: { ca: cert.ca } })).rejects.toThrow();
    const kc = parse(cert.kubeconfig);
    expect(Buffer.from(kc.users[0].user["client-certificate-data"], "base64").toString()).toBe(c.cert);
    expect(Buffer.from(kc.users[0].user["client-key-data"], "base64").toString()).toBe(c.key);
  });

  test("a client certificate from another CA is refused", async () => {
    const { mkdtempSync, rmSync } = await import("node:fs");
    const { join } = await import("node:path");
    const { tmpdir } = await import("node:os");
    const dir = mkdtempSync(join(tmpdir(), "kobun-test-"));
    try {
      const r = Bun.spawnSync(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", "k.pem", "-out", "c.pem", "-days", "1", "-subj", "/CN=intruder"], { cwd: dir, stderr: "pipe" });
      expect(r.exitCode).toBe(0);
      const foreign = { cert: readFileSync(join(dir, "c.pem"), "utf8"), key: readFileSync(join(dir, "k.pem"), "utf8") };
      await expect(fetch(`${cert.url}/version`, { tls: { ca: cert.ca, ...foreign } })).rejects.toThrow();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
