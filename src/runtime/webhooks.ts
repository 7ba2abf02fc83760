// Wiring of the webhook server (admission/) into the operator: started with it when the
// handlers register on.validate, on.mutate or on.convert and webhooks.listen or webhooks.url
// says where, stopped with its scope. Not gated
// by the freeze toggle: a frozen replica still answers the API server (peering decides who
// handles objects, not who admits them). At start-up it tells the API server where to call:
// with `webhooks.url` it creates or replaces URL-based configurations (development); else it
// patches the caBundle of the configurations `kobun manifests` made, when it knows the CA.

import type { Settings } from "../config/index.ts";
import { parseListen } from "../config/index.ts";
import {
  ADMISSION_GROUP, KINDS, PLURALS, crdConversion, crdName, serviceHosts, startWebhookServer, webhookConfigurations,
  type CertSource, type Endpoint, type RuleTarget,
} from "../admission/index.ts";
import type { Registry, WebhookSpec } from "../declaring/index.ts";
import type { KubeClient } from "../kube/index.ts";
import { ApiError } from "../kube/index.ts";
import type { KubeObject, Resource } from "../kube/index.ts";
import { aborted } from "../util/index.ts";
import type { Logger } from "../util/index.ts";
import type { TaskScope } from "../util/index.ts";
import { FatalError } from "./exits.ts";

export interface WebhookWiring {
  client: KubeClient;
  /** Its webhooks (of enabled resources only) and conversions. */
  registry: Pick<Registry, "webhooks" | "conversions">;
  settings: Settings;
  logger: Logger;
  scope: TaskScope;
  signal: AbortSignal;
}

const CRDS: Resource = { group: "apiextensions.k8s.io", version: "v1", plural: "customresourcedefinitions", kind: "CustomResourceDefinition", namespaced: false, statusSubresource: true };
const configurationResource = (kind: "validate" | "mutate"): Resource =>
  ({ group: ADMISSION_GROUP, version: "v1", plural: PLURALS[kind], kind: KINDS[kind], namespaced: false, statusSubresource: false });

/** Serves the webhooks (if any) and registers them; a FatalError when either cannot be done. */
export async function serveWebhooks({ client, registry, settings, logger, scope, signal }: WebhookWiring): Promise<void> {
  if (registry.webhooks.length === 0 && registry.conversions.length === 0) return;
  const w = settings.webhooks;
  const log = logger.child({ room: "webhooks" });
  if (w.url === null && w.listen === null) {
    // Nobody would call them: `kobun manifests`' Deployment sets --webhooks-listen, development --webhooks-url.
    log.info("the handlers have webhooks, but neither webhooks.listen nor webhooks.url is set: not serving them");
    return;
  }
  const url = w.url === null ? undefined : new URL(w.url);
  // A loopback URL is served on loopback only; another one may be reached from the network.
  const loopback = url !== undefined && ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname);
  const listen = parseListen(w.listen ?? `${loopback ? url!.hostname : "0.0.0.0"}:${url?.port || 443}`)!;
  const namespace = w.service.namespace ?? process.env.POD_NAMESPACE ?? "default";
  const certs: CertSource = w.certFile !== null && w.keyFile !== null
    ? { kind: "files", certFile: w.certFile, keyFile: w.keyFile, ...(w.caFile !== null ? { caFile: w.caFile } : {}) }
    : { kind: "self-signed", hosts: w.hosts.length > 0 ? w.hosts : url ? [url.hostname.replace(/^\[|\]$/g, "")] : serviceHosts(w.name, namespace) };
  let served: WebhookWiring["registry"];
  try {
    served = { webhooks: await resolvedWebhooks(client, registry.webhooks, signal), conversions: registry.conversions };
  } catch (error) {
    if (signal.aborted) return;
    throw new FatalError("fatal", `cannot register the webhooks with the API server: ${(error as Error).message}`, { cause: error });
  }
  let server: Awaited<ReturnType<typeof startWebhookServer>>;
  let endpoint: Endpoint | undefined;
  // A new certificate from files with a new caFile: the API server must trust it too.
  const onReload = (caBundle: string | undefined) => {
    const to = endpoint;
    if (!to || caBundle === undefined || scope.signal.aborted) return;
    // In the scope, so that run() ends only after it; a failure is logged, the next reload tries again.
    void scope.spawn("webhooks caBundle", (s) => register({ client, registry: served, signal: s, log }, w.name, to, caBundle, url !== undefined)
      .catch((error) => { if (!s.aborted) log.error("cannot patch the new CA into the caBundle", { error: (error as Error).message }); }));
  };
  try {
    server = await startWebhookServer({ ...listen, certs, registry: served, logger: log, reloadIntervalMs: w.reloadInterval * 1000, onReload });
  } catch (error) {
    throw new FatalError("fatal", `cannot serve webhooks at ${listen.hostname}:${listen.port}: ${(error as Error).message}`, { cause: error });
  }
  scope.spawn("webhooks", async (s) => {
    await aborted(s);
    await server.stop();
  });
  // Port 0 in the URL: the port the server got (`kobun dev`, tests).
  if (url && url.port === "0") url.port = String(server.port);
  endpoint = url ? { url: url.href } : { service: { name: w.name, namespace, port: 443 } };
  try {
    await register({ client, registry: served, signal, log }, w.name, endpoint, server.caBundle, url !== undefined);
  } catch (error) {
    if (signal.aborted) return;
    const reason = error instanceof ApiError && error.code === 403 ? `forbidden (grant get/create/update/patch on them): ${error.message}` : (error as Error).message;
    throw new FatalError("fatal", `cannot register the webhooks with the API server: ${reason}`, { cause: error });
  }
}

/**
 * The webhooks with their resource as the API server names it in a review (group, plural): one
 * registered by a short name, singular or kind is resolved by discovery once, at start-up.
 */
async function resolvedWebhooks(client: KubeClient, webhooks: readonly WebhookSpec[], signal: AbortSignal): Promise<WebhookSpec[]> {
  const resolved: WebhookSpec[] = [];
  for (const spec of webhooks) {
    const resource = await client.resolve(spec.selector, { signal });
    resolved.push({ ...spec, wanted: { ...spec.wanted, group: resource.group, name: resource.plural } });
  }
  return resolved;
}

interface Registration {
  client: KubeClient;
  registry: Pick<Registry, "webhooks" | "conversions">;
  signal: AbortSignal;
  log: Logger;
}

async function register({ client, registry, signal, log }: Registration, name: string, endpoint: Endpoint, caBundle: string | undefined, own: boolean): Promise<void> {
  if (!own && caBundle === undefined) {
    log.info("webhook certificate from files without a caFile: the caBundle is left to whoever issued it (cert-manager's cainjector)");
    return;
  }
  const targets = new Map<WebhookSpec, RuleTarget>();
  for (const spec of registry.webhooks) {
    const resource = await client.resolve(spec.selector, { signal });
    targets.set(spec, { group: resource.group, plural: resource.plural, namespaced: resource.namespaced, ...(spec.wanted.version ? { version: spec.wanted.version } : {}) });
  }
  const wanted = webhookConfigurations({ registry, name, endpoint, caBundle, target: (spec) => targets.get(spec)! });
  for (const configuration of wanted) {
    const kind = configuration.kind === KINDS.validate ? "validate" : "mutate";
    const resource = configurationResource(kind);
    const existing = await client.get(resource, null, name, { signal }).catch((error) => {
      if (error instanceof ApiError && error.code === 404) return undefined;
      throw error;
    });
    if (own) {
      // Ours to define (URL mode): exactly what the handlers say, now.
      if (existing) await client.replace(resource, null, name, { ...configuration, metadata: { ...configuration.metadata, resourceVersion: existing.metadata.resourceVersion } }, { signal });
      else await client.create(resource, null, configuration, { signal });
    } else if (existing) {
      await client.replace(resource, null, name, withCaBundle(existing, caBundle!), { signal });
    } else {
      log.warn(`no ${configuration.kind} ${name}: apply the output of kobun manifests`);
      continue;
    }
    log.info("webhooks registered", { configuration: `${configuration.kind}/${name}`, webhooks: (configuration.webhooks as unknown[]).length, via: "url" in endpoint ? "url" : "service" });
  }
  for (const spec of registry.conversions) {
    const conversion = crdConversion(spec, endpoint, caBundle) as { webhook: { clientConfig: { caBundle?: string } } };
    if (!own) {
      const crd = await client.get(CRDS, null, crdName(spec), { signal });
      conversion.webhook.clientConfig.caBundle = mergedBundle(crd.spec?.conversion?.webhook?.clientConfig?.caBundle, caBundle!);
    }
    await client.patch(CRDS, null, crdName(spec), { spec: { conversion } }, { signal });
    log.info("conversion webhook registered", { crd: crdName(spec) });
  }
}

/** CAs kept in a caBundle: this replica's first, then the latest others'. */
const BUNDLE_SIZE = 5;

/**
 * The configuration with this replica's CA first in each webhook's caBundle. Each replica
 * makes its own CA, and the Service may send a review to any of them, so the CAs of the
 * others (the latest few) stay trusted too.
 */
function withCaBundle(configuration: KubeObject, caBundle: string): KubeObject {
  const webhooks = ((configuration.webhooks as any[]) ?? []).map((hook) =>
    ({ ...hook, clientConfig: { ...hook.clientConfig, caBundle: mergedBundle(hook.clientConfig?.caBundle, caBundle) } }));
  return { ...configuration, webhooks };
}

/** base64 of `ours` followed by the other CAs of the `had` bundle (base64), at most BUNDLE_SIZE. */
function mergedBundle(had: unknown, ours: string): string {
  const previous = Buffer.from(typeof had === "string" ? had : "", "base64").toString();
  const certificates = [ours, ...(previous.match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g) ?? [])].map((c) => `${c.trim()}\n`);
  return Buffer.from([...new Set(certificates)].slice(0, BUNDLE_SIZE).join("")).toString("base64");
}
