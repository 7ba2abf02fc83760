// How the API server learns where to call the webhooks: with `webhooks.url` kobun creates or
// replaces URL-based configurations (development, `own`); else it patches the caBundle of the
// configurations `kobun manifests` made, when it knows the CA, keeping the other replicas' CAs.
// Apart from server.ts, which serves them: this only writes configurations and CRDs.

import { ADMISSION_GROUP, KINDS, PLURALS, crdConversion, crdName, webhookConfigurations } from "./configurations.ts";
import type { Endpoint, RuleTarget } from "./configurations.ts";
import type { Registry, WebhookSpec } from "../declaring/index.ts";
import { ApiError, type KubeClient, type KubeObject, type Resource } from "../kube/index.ts";
import type { Logger } from "../util/index.ts";

const CRDS: Resource = {
  group: "apiextensions.k8s.io", version: "v1", plural: "customresourcedefinitions", kind: "CustomResourceDefinition",
  namespaced: false, statusSubresource: true,
};
const configurationResource = (kind: "validate" | "mutate"): Resource => ({
  group: ADMISSION_GROUP, version: "v1", plural: PLURALS[kind], kind: KINDS[kind], namespaced: false,
  statusSubresource: false,
});

/** What register() writes, and where the webhooks are served. */
export interface Registration {
  client: KubeClient;
  registry: Pick<Registry, "webhooks" | "conversions">;
  signal: AbortSignal;
  log: Logger;
  /** The configurations' name (webhooks.name). */
  name: string;
  endpoint: Endpoint;
  /** The CA the API server must trust; unknown for a certificate from files without a caFile. */
  caBundle: string | undefined;
  /** URL mode: the configurations are kobun's to define; else only their caBundle is patched. */
  own: boolean;
}

/** Registers the webhooks and conversions with the API server (configurations, CRDs). */
export async function register(
  { client, registry, signal, log, name, endpoint, caBundle, own }: Registration,
): Promise<void> {
  if (!own && caBundle === undefined) {
    log.info("webhook certificate from files without a caFile: " +
      "the caBundle is left to whoever issued it (cert-manager's cainjector)");
    return;
  }
  const targets = new Map<WebhookSpec, RuleTarget>();
  for (const spec of registry.webhooks) {
    const resource = await client.resolve(spec.selector, { signal });
    const { group, plural, namespaced } = resource;
    targets.set(spec, { group, plural, namespaced, ...(spec.wanted.version ? { version: spec.wanted.version } : {}) });
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
      if (existing) {
        const metadata = { ...configuration.metadata, resourceVersion: existing.metadata.resourceVersion };
        await client.replace(resource, null, name, { ...configuration, metadata }, { signal });
      } else await client.create(resource, null, configuration, { signal });
    } else if (existing) {
      await client.replace(resource, null, name, withCaBundle(existing, caBundle!), { signal });
    } else {
      log.warn(`no ${configuration.kind} ${name}: apply the output of kobun manifests`);
      continue;
    }
    log.info("webhooks registered", {
      configuration: `${configuration.kind}/${name}`, webhooks: (configuration.webhooks as unknown[]).length,
      via: "url" in endpoint ? "url" : "service",
    });
  }
  for (const spec of registry.conversions) {
    const conversion = crdConversion(spec, endpoint, caBundle) as { webhook: { clientConfig: { caBundle?: string } } };
    if (!own) {
      const crd = await client.get(CRDS, null, crdName(spec), { signal });
      const had = crd.spec?.conversion?.webhook?.clientConfig?.caBundle;
      conversion.webhook.clientConfig.caBundle = mergedBundle(had, caBundle!);
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
  const webhooks = ((configuration.webhooks as any[]) ?? []).map((hook) => ({
    ...hook, clientConfig: { ...hook.clientConfig, caBundle: mergedBundle(hook.clientConfig?.caBundle, caBundle) },
  }));
  return { ...configuration, webhooks };
}

/** base64 of `ours` followed by the other CAs of the `had` bundle (base64), at most BUNDLE_SIZE. */
function mergedBundle(had: unknown, ours: string): string {
  const previous = Buffer.from(typeof had === "string" ? had : "", "base64").toString();
  const others = previous.match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g) ?? [];
  const certificates = [ours, ...others].map((c) => `${c.trim()}\n`);
  return Buffer.from([...new Set(certificates)].slice(0, BUNDLE_SIZE).join("")).toString("base64");
}
