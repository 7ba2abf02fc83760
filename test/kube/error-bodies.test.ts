// Text that is not the API server's own Status (a proxy's error page, an exec plugin's
// stderr) reaches errors and logs without anything credential-shaped in it: a page that
// echoes our request would otherwise print our bearer token (issue 11, defect 7).

import { afterAll, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ApiError, KubeClient } from "../../src/kube/index.ts";
import { withoutCredentials } from "../../src/util/redact.ts";

const TOKEN = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQifQ.c2lnbmF0dXJlLW9mLXRoZS10b2tlbi0wMTIz";
const dir = mkdtempSync(join(tmpdir(), "kobun-error-bodies-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function kubeconfig(server: string, user: Record<string, unknown>): string {
  return JSON.stringify({
    clusters: [{ name: "c", cluster: { server } }],
    users: [{ name: "u", user }],
    contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
    "current-context": "x",
  });
}

test("a proxy's error page that echoes the request loses the token, keeps the rest", async () => {
  const server = Bun.serve({
    hostname: "127.0.0.1", port: 0,
    fetch: (req) => new Response(`400 Bad Request\nrequest headers: Authorization: ${req.headers.get("authorization")}; upstream said no`, { status: 400 }),
  });
  try {
    const client = await KubeClient.connect({ kubeconfigText: kubeconfig(server.url.href, { token: TOKEN }), retries: 0 });
    const error = (await client.request("GET", "/api").catch((e) => e)) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect(error.code).toBe(400);
    expect(error.message).toContain("400 Bad Request");
    expect(error.message).toContain("upstream said no");
    for (const part of TOKEN.split(".")) expect(error.message).not.toContain(part.slice(0, 12));
    client.close();
  } finally {
    server.stop(true);
  }
});

test("an exec plugin that prints its token to stderr and fails is reported without the token", async () => {
  const script = join(dir, "noisy-plugin.sh");
  writeFileSync(script, `#!/bin/sh\necho "refresh failed for token ${TOKEN}" >&2\nexit 3\n`);
  chmodSync(script, 0o755);
  const text = kubeconfig("http://127.0.0.1:9", { exec: { apiVersion: "client.authentication.k8s.io/v1", command: script, interactiveMode: "Never" } });
  const error = (await KubeClient.connect({ kubeconfigText: text }).catch((e) => e)) as Error;
  expect(error.message).toContain("exit code 3");
  expect(error.message).toContain("refresh failed for token");
  expect(error.message).not.toContain("eyJhbGciOi");
});

test("credential-shaped runs go, ordinary diagnostics stay", () => {
  expect(withoutCredentials("404 page not found")).toBe("404 page not found");
  expect(withoutCredentials("upstream connect error or disconnect/reset before headers")).toBe("upstream connect error or disconnect/reset before headers");
  expect(withoutCredentials("Authorization: Bearer abc.def")).toBe("Authorization: Bearer (redacted)");
  expect(withoutCredentials(`data: ${"c2VjcmV0".repeat(5)}`)).toBe("data: (40 characters redacted)");
  expect(withoutCredentials(`token ${TOKEN} expired`)).toBe(`token (a ${TOKEN.length}-character JWT redacted) expired`);
});
