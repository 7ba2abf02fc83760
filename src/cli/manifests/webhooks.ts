// What `kobun manifests` adds when the handlers register on.validate, on.mutate or on.convert:
// a Service in front of the operator's Pods (443 → the container's 9443), the
// Validating/MutatingWebhookConfiguration named after the operator pointing at it, the CRDs'
// `conversion`, and the RBAC to keep exactly those objects' caBundle in sync at start-up.
// The caBundle itself is left empty: the operator patches it (self-signed), or cert-manager's
// cainjector does (certificates from files).

import {
  ADMISSION_GROUP, PLURALS, crdConversion, crdName, webhookConfigurations, type RuleTarget,
} from "../../admission/index.ts";
import { registry as defaultRegistry, type Registry, type WebhookSpec } from "../../declaring/index.ts";
import type { KubeObject } from "../../kube/index.ts";
import { grantedName, type Rule } from "./rbac.ts";

/** The webhooks and conversions to render (renderManifests leaves out those of disabled resources). */
export type Admissions = Pick<Registry, "webhooks" | "conversions">;

/** The port the Deployment's container serves the webhooks on. */
export const WEBHOOK_PORT = 9443;

export const hasWebhooks = (registry: Admissions = defaultRegistry) =>
  registry.webhooks.length > 0 || registry.conversions.length > 0;

/** The Service and the webhook configurations; `crds` (the shipped ones) get their conversion set in place. */
export function webhookObjects(
  name: string, namespace: string, crds: KubeObject[], registry: Admissions = defaultRegistry,
): KubeObject[] {
  if (!hasWebhooks(registry)) return [];
  const endpoint = { service: { name, namespace, port: 443 } };
  const target = (spec: WebhookSpec): RuleTarget => {
    const { group, plural, version, crd, clusterScoped } = grantedName(crds, spec.selector);
    return { group, plural, ...(version ? { version } : {}), ...(crd ? { namespaced: !clusterScoped } : {}) };
  };
  for (const spec of registry.conversions) {
    const crd = crds.find((c) => c.metadata?.name === crdName(spec));
    if (crd) crd.spec = { ...crd.spec, conversion: crdConversion(spec, endpoint, undefined) };
  }
  const service: KubeObject = {
    apiVersion: "v1", kind: "Service", metadata: { name, namespace },
    spec: {
      selector: { app: name }, ports: [{ name: "webhooks", port: 443, targetPort: WEBHOOK_PORT, protocol: "TCP" }],
    },
  };
  return [service, ...webhookConfigurations({ registry, name, endpoint, caBundle: undefined, target })];
}

/** Cluster-wide grants for exactly the operator's own webhook objects (resourceNames). */
export function webhookRules(name: string, registry: Admissions = defaultRegistry): Rule[] {
  const rules: Rule[] = [];
  const configurations = (["validate", "mutate"] as const)
    .filter((kind) => registry.webhooks.some((w) => w.kind === kind))
    .map((kind) => PLURALS[kind]);
  if (configurations.length > 0) {
    const verbs = ["get", "update"];
    rules.push({ apiGroups: [ADMISSION_GROUP], resources: configurations, verbs, resourceNames: [name] });
  }
  const crds = registry.conversions.map(crdName);
  if (crds.length > 0) {
    rules.push({
      apiGroups: ["apiextensions.k8s.io"], resources: ["customresourcedefinitions"], verbs: ["get", "patch"],
      resourceNames: crds,
    });
  }
  return rules;
}
