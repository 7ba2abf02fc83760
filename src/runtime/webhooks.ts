// Wiring of the webhook server (admission/) into the operator: started with it when the
// handlers register on.validate, on.mutate or on.convert and webhooks.listen or webhooks.url
// says where, stopped with its scope. Not gated by the freeze toggle: a frozen replica still
// answers the API server (peering decides who handles objects, not who admits them). At
// start-up it tells the API server where to call (admission/'s register).

import type { Settings } from "../config/index.ts";
import { parseListen } from "../config/index.ts";
import {
  register, serviceHosts, startWebhookServer, type CertSource, type ClientCertPolicy, type Endpoint,
} from "../admission/index.ts";
import type { Registry, WebhookSpec } from "../declaring/index.ts";
import type { KubeClient } from "../kube/index.ts";
import { ApiError } from "../kube/index.ts";
import { aborted } from "../util/index.ts";
import type { Logger } from "../util/index.ts";
import type { TaskScope } from "../util/index.ts";
import { FatalError } from "./exits.ts";

/** An address to listen on, as parseListen reads it. */
type Listen = NonNullable<ReturnType<typeof parseListen>>;

/** What serveWebhooks() is wired with; made by operate() (parts.ts). */
export interface WebhookWiring {
  client: KubeClient;
  /** Its webhooks (of enabled resources only) and conversions. */
  registry: Pick<Registry, "webhooks" | "conversions">;
  settings: Settings;
  logger: Logger;
  scope: TaskScope;
  signal: AbortSignal;
}

/** Serves the webhooks (if any) and registers them; a FatalError when either cannot be done. */
export async function serveWebhooks(
  { client, registry, settings, logger, scope, signal }: WebhookWiring,
): Promise<void> {
  if (registry.webhooks.length === 0 && registry.conversions.length === 0) return;
  const w = settings.webhooks;
  const log = logger.child({ room: "webhooks" });
  if (w.url === null && w.listen === null) {
    // Nobody would call them: `kobun manifests`' Deployment sets --webhooks-listen, development --webhooks-url.
    log.warn("the handlers have webhooks, but neither webhooks.listen nor webhooks.url is set: not serving them", {
      hint: "--webhooks-listen (in a cluster) or --webhooks-url (from outside one); `kobun dev` and the kit set one",
    });
    return;
  }
  const { url, listen, namespace } = whereServed(w);
  const certs = certSource(w, url, namespace);
  let served: WebhookWiring["registry"];
  try {
    served = { webhooks: await resolvedWebhooks(client, registry.webhooks, signal), conversions: registry.conversions };
  } catch (error) {
    if (signal.aborted) return;
    const why = (error as Error).message;
    throw new FatalError("fatal", `cannot register the webhooks with the API server: ${why}`, { cause: error });
  }
  const own = url !== undefined;
  let server: Awaited<ReturnType<typeof startWebhookServer>>;
  let endpoint: Endpoint | undefined;
  // A new certificate from files with a new caFile: the API server must trust it too.
  const onReload = (caBundle: string | undefined) => {
    const to = endpoint;
    if (!to || caBundle === undefined || scope.signal.aborted) return;
    // In the scope, so that run() ends only after it; a failure is logged, the next reload tries again.
    const registration = { client, registry: served, log, name: w.name, endpoint: to, caBundle, own };
    void scope.spawn("webhooks caBundle", (s) => register({ ...registration, signal: s }).catch((error) => {
      if (!s.aborted) log.error("cannot patch the new CA into the caBundle", { error: (error as Error).message });
    }));
  };
  try {
    const options = { ...listen, certs, registry: served, logger: log, reloadIntervalMs: w.reloadInterval * 1000 };
    server = await startWebhookServer({ ...options, onReload, ...(await clientCertPolicy(w)) });
  } catch (error) {
    const where = `${listen.hostname}:${listen.port}`;
    throw new FatalError("fatal", `cannot serve webhooks at ${where}: ${(error as Error).message}`, { cause: error });
  }
  scope.spawn("webhooks", async (s) => {
    await aborted(s);
    await server.stop();
  });
  // Port 0 in the URL: the port the server got (`kobun dev`, tests).
  if (url && url.port === "0") url.port = String(server.port);
  endpoint = url ? { url: url.href } : { service: { name: w.name, namespace, port: 443 } };
  try {
    await register({ client, registry: served, signal, log, name: w.name, endpoint, caBundle: server.caBundle, own });
  } catch (error) {
    if (signal.aborted) return;
    const reason = error instanceof ApiError && error.code === 403
      ? `forbidden (grant get/create/update/patch on them): ${error.message}`
      : (error as Error).message;
    throw new FatalError("fatal", `cannot register the webhooks with the API server: ${reason}`, { cause: error });
  }
}

/**
 * The webhooks with their resource as the API server names it in a review (group, plural): one
 * registered by a short name, singular or kind is resolved by discovery once, at start-up.
 */
async function resolvedWebhooks(
  client: KubeClient, webhooks: readonly WebhookSpec[], signal: AbortSignal,
): Promise<WebhookSpec[]> {
  const resolved: WebhookSpec[] = [];
  for (const spec of webhooks) {
    const resource = await client.resolve(spec.selector, { signal });
    resolved.push({ ...spec, wanted: { ...spec.wanted, group: resource.group, name: resource.plural } });
  }
  return resolved;
}

/**
 * Where the webhooks are served: the URL the API server calls (if set), the address listened on,
 * and the namespace of the Service otherwise.
 */
function whereServed(w: Settings["webhooks"]): { url: URL | undefined; listen: Listen; namespace: string } {
  const url = w.url === null ? undefined : new URL(w.url);
  // A loopback URL is served on loopback only; another one may be reached from the network.
  const loopback = url !== undefined && ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname);
  const listen = parseListen(w.listen ?? `${loopback ? url!.hostname : "0.0.0.0"}:${url?.port || 443}`)!;
  const namespace = w.service.namespace ?? process.env.POD_NAMESPACE ?? "default";
  return { url, listen, namespace };
}

/**
 * Where the server's certificate comes from: the files the settings name, or a self-signed one
 * for the hosts the settings list, else the URL's host, else the Service's names.
 */
function certSource(w: Settings["webhooks"], url: URL | undefined, namespace: string): CertSource {
  if (w.certFile !== null && w.keyFile !== null) {
    const { certFile, keyFile, caFile } = w;
    return { kind: "files", certFile, keyFile, ...(caFile !== null ? { caFile } : {}) };
  }
  const hosts = w.hosts.length > 0 ? w.hosts
    : url ? [url.hostname.replace(/^\[|\]$/g, "")]
    : serviceHosts(w.name, namespace);
  return { kind: "self-signed", hosts };
}

/** The client certificates asked for (webhooks.clientCaFile), if any. */
async function clientCertPolicy(w: Settings["webhooks"]): Promise<{ clientCerts?: ClientCertPolicy }> {
  if (w.clientCaFile === null) return {};
  const ca = await Bun.file(w.clientCaFile).text().catch((error: Error) => {
    throw new Error(`cannot read webhooks.clientCaFile: ${error.message}`);
  });
  if (!ca.includes("-----BEGIN CERTIFICATE-----")) {
    throw new Error(`webhooks.clientCaFile ${w.clientCaFile} holds no PEM certificate`);
  }
  return { clientCerts: { ca, required: w.clientCertRequired } };
}
