// Issue 15 (profile: add/removeEventListener were ~9% of the operator's CPU on a real API
// server): requests whose credentials are current hang at most one abort listener on the
// caller's signal between them (their shared deadlines', kube/deadlines.ts), none to wait for
// credentials that need no waiting. The callers' signals are long-lived and shared by every
// request in flight, so each listener there costs on add and on remove.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { KubeClient } from "../../src/kube/client.ts";
import type { Resource } from "../../src/kube/types.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";

const configmaps: Resource = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false };
let sandbox: Sandbox;
let client: KubeClient;
beforeAll(async () => {
  sandbox = await startSandbox();
  client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
});
afterAll(async () => {
  client.close();
  await sandbox.stop();
});

test("requests with current credentials add one abort listener to the caller's signal between them", async () => {
  await client.list(configmaps, { namespace: "default" }); // credentials loaded
  const controller = new AbortController();
  const signal = controller.signal;
  let added = 0;
  let removed = 0;
  const add = signal.addEventListener.bind(signal);
  const remove = signal.removeEventListener.bind(signal);
  signal.addEventListener = ((...args: Parameters<AbortSignal["addEventListener"]>) => (added++, add(...args))) as AbortSignal["addEventListener"];
  signal.removeEventListener = ((...args: Parameters<AbortSignal["removeEventListener"]>) => (removed++, remove(...args))) as AbortSignal["removeEventListener"];
  for (let i = 0; i < 5; i++) await client.list(configmaps, { namespace: "default", signal });
  expect(added).toBe(1);
  expect(removed).toBe(0);
});
