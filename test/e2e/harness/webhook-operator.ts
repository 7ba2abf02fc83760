// An operator run in-process against an e2e target, serving its webhooks at
// https://127.0.0.1:<free port> through uniquely named configurations: for the files that look at
// what a handler learns of its call (webhooks.e2e.ts, webhook-peer.e2e.ts).

import { resolveSettings } from "../../../src/config/index.ts";
import type { Registry } from "../../../src/declaring/registry.ts";
import { KubeClient } from "../../../src/kube/client.ts";
import type { Resource } from "../../../src/kube/types.ts";
import { run } from "../../../src/runtime/operator.ts";
import { Logger, memorySink } from "../../../src/util/log.ts";
import { eventually, rawRequest, uniqueName } from "./kube.ts";
import type { Target } from "./target.ts";

const configurations = (plural: string): Resource =>
  ({ group: "admissionregistration.k8s.io", version: "v1", plural, kind: "", namespaced: false, statusSubresource: false });

export interface WebhookOperator {
  /** The configurations' name. */
  name: string;
  /** Stops the operator and deletes its configurations. */
  stop(): Promise<void>;
}

/** Starts `registry` watching `ns`; `fileData` adds settings (e.g. webhooks.clientCaFile). */
export async function startWebhookOperator(
  t: Target, ns: string, registry: Registry, fileData: Record<string, unknown> = {},
): Promise<WebhookOperator> {
  const name = uniqueName("wh-op");
  const flags = { namespaces: [ns], standalone: true, webhooksUrl: "https://127.0.0.1:0", webhooksName: name };
  const settings = resolveSettings({ fileData, flags });
  const client = await KubeClient.connect({ kubeconfig: t.kubeconfigPath });
  const halt = new AbortController();
  const started = Promise.withResolvers<void>();
  const logger = new Logger(memorySink("error"));
  const running = run({ signal: halt.signal, settings, client, registry, logger, onStarted: () => started.resolve() });
  const stop = async () => {
    halt.abort();
    await running.catch(() => undefined);
    client.close();
    for (const plural of ["validatingwebhookconfigurations", "mutatingwebhookconfigurations"]) {
      await t.client.delete(configurations(plural), null, name).catch(() => {});
    }
  };
  const ended = running.then(() => Promise.reject(new Error("the operator ended before it started")));
  await Promise.race([started.promise, ended]).catch(async (error) => {
    await stop();
    throw error;
  });
  return { name, stop };
}

/**
 * The API server loads a new webhook configuration a moment after it is written: dry-runs
 * ConfigMaps labelled `labels` in `ns` until `called()` says the webhook saw one.
 */
export async function untilCalled(t: Target, ns: string, labels: Record<string, string>, called: () => boolean): Promise<void> {
  await eventually("the webhook called", async () => {
    const configMap = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: uniqueName("probe"), labels } };
    await rawRequest(t.client, "POST", `/api/v1/namespaces/${ns}/configmaps?dryRun=All`, configMap);
    return called();
  }, { timeoutMs: 30_000, intervalMs: 200 });
}
