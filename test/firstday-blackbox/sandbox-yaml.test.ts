// A YAML body the sandbox cannot read, as a client that sends YAML meets it (curl, client-go's YAML serializer, a
// server-side apply): a 400 in kube-apiserver's words, which wrap sigs.k8s.io/yaml's "error converting YAML to JSON:
// yaml: line N: ...", on one line that quotes none of the body (a Secret's data may be what failed to parse).

import { afterAll, beforeAll, expect, test } from "bun:test";
import { startSandbox, type Sandbox } from "kobun/sandbox";

let sandbox: Sandbox;
beforeAll(async () => void (sandbox = await startSandbox()));
afterAll(() => sandbox?.stop());

async function send(method: string, path: string, type: string, body: string) {
  const response = await fetch(`${sandbox.url}${path}`, { method, headers: { "content-type": type }, body });
  return { status: response.status, message: ((await response.json()) as { message: string }).message };
}

test("a create and a server-side apply with broken YAML: 400, the line named, nothing of the body echoed", async () => {
  const broken = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata: {token: \"s3cr3t\n";
  const created = await send("POST", "/api/v1/namespaces/default/configmaps", "application/yaml", broken);
  const applied = await send("PATCH", "/api/v1/namespaces/default/configmaps/x?fieldManager=me",
    "application/apply-patch+yaml", broken);
  expect(created.status).toBe(400);
  expect(created.message).toMatch(
    /^the object provided is unrecognized \(must be of type ConfigMap\): error converting YAML to JSON: yaml: line \d+: .+ \([0-9a-f]+ \.\.\.\)$/);
  expect(applied.status).toBe(400);
  expect(applied.message).toMatch(/^error decoding YAML: error converting YAML to JSON: yaml: line \d+: [^\n]+$/);
  for (const { message } of [created, applied]) expect(message).not.toContain("s3cr3t");
}, 15_000);
