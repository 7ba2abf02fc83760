// The objects that tell the API server to call this operator: one ValidatingWebhookConfiguration
// and one MutatingWebhookConfiguration named after the operator (one webhook per handler), and
// the `conversion` of each CRD with an `on.convert`. Pure: `kobun manifests` renders them with
// a Service clientConfig; the runtime registers them with a URL (`--webhooks-url`) and keeps
// their caBundle in sync.

import type { ConversionSpec, Registry, WebhookSpec } from "../declaring/index.ts";
import type { KubeObject, Resource } from "../kube/index.ts";
import { DEFAULT_TIMEOUT_SECONDS } from "./review.ts";

export const ADMISSION_GROUP = "admissionregistration.k8s.io";
export const KINDS = { validate: "ValidatingWebhookConfiguration", mutate: "MutatingWebhookConfiguration" } as const;
export const PLURALS = {
  validate: "validatingwebhookconfigurations", mutate: "mutatingwebhookconfigurations",
} as const;

/** Where the API server sends reviews: a URL (development) or the operator's Service. */
export type Endpoint = { url: string } | { service: { name: string; namespace: string; port: number } };

/** What a webhook's rule names: the resource's group, version (or all), plural and scope, if known. */
export type RuleTarget = Pick<Resource, "group" | "plural"> & { version?: string; namespaced?: boolean };

export function clientConfig(endpoint: Endpoint, path: string, caBundle: string | undefined): Record<string, unknown> {
  const ca = caBundle ? { caBundle: Buffer.from(caBundle).toString("base64") } : {};
  if ("url" in endpoint) return { url: `${endpoint.url.replace(/\/+$/, "")}${path}`, ...ca };
  return { service: { ...endpoint.service, path }, ...ca };
}

export const webhookPath = (spec: WebhookSpec) => `/${spec.kind}/${spec.id}`;
export const conversionPath = (spec: ConversionSpec) => `/convert/${spec.wanted.name}.${spec.wanted.group}`;
export const webhookName = (spec: WebhookSpec, operator: string) => `${spec.id}.${operator}.kobun.dev`;

function webhookEntry(
  spec: WebhookSpec, target: RuleTarget, operator: string, endpoint: Endpoint, caBundle: string | undefined,
): Record<string, unknown> {
  const o = spec.options;
  const plainLabels = Object.entries(o.labels ?? {}).filter(([, v]) => typeof v === "string");
  const matchConditions = o.matchConditions?.map((c) => ({ name: c.name, expression: c.expression })) ?? [];
  return {
    name: webhookName(spec, operator),
    admissionReviewVersions: ["v1"],
    clientConfig: clientConfig(endpoint, webhookPath(spec), caBundle),
    rules: [{
      operations: [...(o.operations ?? ["CREATE", "UPDATE"])],
      apiGroups: [target.group],
      apiVersions: [target.version ?? "*"],
      resources: [target.plural, ...(o.subresources ?? []).map((s) => `${target.plural}/${s}`)],
      scope: target.namespaced === undefined ? "*" : target.namespaced ? "Namespaced" : "Cluster",
    }],
    failurePolicy: o.failurePolicy ?? "Fail",
    sideEffects: o.sideEffects ?? "None",
    timeoutSeconds: o.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS,
    matchPolicy: "Equivalent",
    ...(plainLabels.length > 0 ? { objectSelector: { matchLabels: Object.fromEntries(plainLabels) } } : {}),
    ...(matchConditions.length ? { matchConditions } : {}),
    ...(spec.kind === "mutate" ? { reinvocationPolicy: "Never" } : {}),
  };
}

export interface ConfigurationInput {
  registry: Pick<Registry, "webhooks" | "conversions">;
  /** The configurations' name (the operator's). */
  name: string;
  endpoint: Endpoint;
  caBundle: string | undefined;
  /** Resolves a webhook's selector to what its rule names. */
  target(spec: WebhookSpec): RuleTarget;
}

/** The Validating and Mutating configurations the registry's webhooks need (none when it has none of a kind). */
export function webhookConfigurations(input: ConfigurationInput): KubeObject[] {
  const out: KubeObject[] = [];
  for (const kind of ["validate", "mutate"] as const) {
    const specs = input.registry.webhooks.filter((w) => w.kind === kind);
    if (specs.length === 0) continue;
    out.push({
      apiVersion: `${ADMISSION_GROUP}/v1`, kind: KINDS[kind],
      metadata: { name: input.name, labels: { "app.kubernetes.io/managed-by": "kobun" } },
      webhooks: specs.map((spec) => webhookEntry(spec, input.target(spec), input.name, input.endpoint, input.caBundle)),
    });
  }
  return out;
}

/** The CRD's `spec.conversion` for a conversion webhook. */
export function crdConversion(
  spec: ConversionSpec, endpoint: Endpoint, caBundle: string | undefined,
): Record<string, unknown> {
  const config = clientConfig(endpoint, conversionPath(spec), caBundle);
  return { strategy: "Webhook", webhook: { conversionReviewVersions: ["v1"], clientConfig: config } };
}

export const crdName = (spec: ConversionSpec) => `${spec.wanted.name}.${spec.wanted.group}`;
