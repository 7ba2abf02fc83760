// Review findings in kube/: waiting for credentials (a slow exec plugin) must end when the
// request's signal aborts, like every other wait in kobun.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { KubeClient, type Resource } from "../../src/kube/index.ts";

const NS: Resource = { group: "", version: "v1", plural: "namespaces", kind: "Namespace", namespaced: false, statusSubresource: true };
const TOKEN = "review-sandbox-token-0123456789";

let sb: Sandbox;
let dir: string;
beforeAll(async () => {
  sb = await startSandbox({ token: TOKEN });
  dir = mkdtempSync(join(tmpdir(), "kobun-kube-review-"));
});
afterAll(async () => {
  await sb.stop();
  rmSync(dir, { recursive: true, force: true });
});

const started = () => join(dir, "started");
/** Resolves once the plugin has been started `n` times (a file the sandbox cannot announce). */
async function pluginRuns(n: number): Promise<void> {
  const deadline = Date.now() + 2000;
  while (Bun.file(started()).size < 2 * n) {
    if (Date.now() > deadline) throw new Error(`the plugin did not start ${n} times`);
    await Bun.sleep(2);
  }
}

/** A plugin that answers at once with a stale token, then (re-run after the 401) hangs for 3 s. */
async function slowAfterFirstRun(): Promise<KubeClient> {
  const counter = join(dir, "count");
  const script = join(dir, "plugin.sh");
  writeFileSync(counter, "");
  writeFileSync(started(), "");
  writeFileSync(
    script,
    `#!/bin/sh
echo s >> "${started()}"
if [ -s "${counter}" ]; then sleep 3; fi
echo x >> "${counter}"
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"stale"}}'
`,
  );
  chmodSync(script, 0o755);
  const doc = parse(sb.kubeconfig);
  doc.users[0].user = { exec: { apiVersion: "client.authentication.k8s.io/v1", command: script, interactiveMode: "Never" } };
  const path = join(dir, "kubeconfig.yaml");
  writeFileSync(path, stringify(doc));
  return KubeClient.connect({ kubeconfig: path });
}

test("aborting a request ends its wait for a slow exec plugin at once", async () => {
  const client = await slowAfterFirstRun();
  const controller = new AbortController();
  const t0 = Date.now();
  const result = client.list(NS, { signal: controller.signal }).then(
    () => "resolved",
    (error: Error) => error.name,
  );
  await pluginRuns(2); // the 401 came back; the plugin runs again, slowly
  controller.abort();
  expect(await result).toBe("AbortError");
  expect(Date.now() - t0).toBeLessThan(1500);
  client.close();
});

test("aborting a watch stream ends its wait for a slow exec plugin at once", async () => {
  const client = await slowAfterFirstRun();
  const controller = new AbortController();
  const t0 = Date.now();
  const result = client.stream("/api/v1/namespaces", { watch: "true" }, controller.signal).then(
    (response) => {
      void response.body?.cancel();
      return "resolved";
    },
    (error: Error) => error.name,
  );
  await pluginRuns(2);
  controller.abort();
  expect(await result).toBe("AbortError");
  expect(Date.now() - t0).toBeLessThan(1500);
  client.close();
});
