// `kobun manifests`: everything needed to deploy this operator, derived from its handlers:
// the CRDs shipped beside the handlers, the peering CRDs, a least-privilege ServiceAccount +
// ClusterRole (or Role per namespace) + binding, and a Deployment running the binary.

import { stringify } from "yaml";
import type { Settings } from "../config/index.ts";
import { manifestObjects, parseSelector, peeringCRDs, peeringResource, registry, type KubeObject, type Manifest, type ResourceSelector } from "../runtime/manifests.ts";
import { parseRunFlags, resolveSettings } from "../config/index.ts";
import { defaultHandlerPaths, loadHandlers, type Embedded } from "./handlers.ts";
import { readFlags, stringFlag } from "./args.ts";

export interface ManifestOptions {
  name: string;
  namespace: string;
  image: string;
  settings: Settings;
  selectors: ResourceSelector[];
  manifests: Manifest[];
}

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/** The RBAC rules the operator needs: no more than its handlers, peering and events require. */
export function rbacRules(options: Pick<ManifestOptions, "settings" | "selectors" | "manifests">): Rule[] {
  const crds = manifestObjects(options.manifests, "definitions").filter((o) => o.kind === "CustomResourceDefinition");
  const rules: Rule[] = [];
  for (const selector of options.selectors) {
    const wanted = parseSelector(selector);
    let group = wanted.group;
    if (group === undefined) group = (crds.find((c) => c.spec?.names?.plural === wanted.name)?.spec?.group as string | undefined) ?? "";
    // The engine only reads, watches and merge-patches (results, progress, finalizers).
    rules.push({ apiGroups: [group], resources: [wanted.name], verbs: ["get", "list", "watch", "patch"] });
    rules.push({ apiGroups: [group], resources: [`${wanted.name}/status`], verbs: ["patch"] });
  }
  rules.push({ apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] });
  const peering = options.settings.peering;
  if (!peering.standalone) {
    if (peering.mode === "lease") {
      // Acquire by create, renew and release by update with optimistic concurrency.
      rules.push({ apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "list", "watch", "create", "update"] });
    } else {
      const resource = peeringResource(peering.group, !peering.clusterwide);
      rules.push({ apiGroups: [resource.group], resources: [resource.plural], verbs: ["get", "list", "watch", "create", "patch"] });
      // Where a cluster's peering CRD has a status subresource, records go there.
      rules.push({ apiGroups: [resource.group], resources: [`${resource.plural}/status`], verbs: ["patch"] });
    }
  }
  if (options.settings.namespaces.include.some((ns) => /[*?]/.test(ns))) {
    rules.push({ apiGroups: [""], resources: ["namespaces"], verbs: ["get", "list", "watch"] });
  }
  return rules;
}

export function renderManifests(options: ManifestOptions): string {
  const { name, namespace, image, settings } = options;
  const clusterwide = settings.namespaces.allNamespaces || settings.namespaces.include.length === 0;
  // Above watching.clusterWideAbove namespaces the operator lists and watches cluster-wide
  // (one stream per resource): a Role per namespace would not allow that.
  const clusterRbac = clusterwide || settings.namespaces.include.length > settings.watching.clusterWideAbove;
  const docs: KubeObject[] = [
    ...manifestObjects(options.manifests, "definitions").filter((o) => o.kind === "CustomResourceDefinition"),
    ...(settings.peering.standalone || settings.peering.mode === "lease" ? [] : peeringCRDs(settings.peering.group)),
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name, namespace } },
  ];
  const rules = rbacRules(options);
  const subjects = [{ kind: "ServiceAccount", name, namespace }];
  if (clusterRbac) {
    docs.push({ apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name }, rules });
    docs.push({
      apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRoleBinding", metadata: { name },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name }, subjects,
    });
  } else {
    for (const ns of settings.namespaces.include) {
      docs.push({ apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role", metadata: { name, namespace: ns }, rules });
      docs.push({
        apiVersion: "rbac.authorization.k8s.io/v1", kind: "RoleBinding", metadata: { name, namespace: ns },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name }, subjects,
      });
    }
  }
  const args = ["run", ...(clusterwide ? ["--all-namespaces"] : settings.namespaces.include.map((ns) => `--namespace=${ns}`)), "--liveness=http://0.0.0.0:8080/healthz"];
  docs.push({
    apiVersion: "apps/v1", kind: "Deployment", metadata: { name, namespace },
    spec: {
      replicas: 1,
      strategy: { type: "Recreate" },
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          serviceAccountName: name,
          containers: [{
            name, image, args,
            // POD_ID names this replica in peering; POD_NAMESPACE is where a cluster-wide
            // operator keeps its Lease (lease mode).
            env: [
              { name: "POD_ID", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
              { name: "POD_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
            ],
            livenessProbe: { httpGet: { path: "/healthz", port: 8080 } },
            resources: { requests: { cpu: "10m", memory: "48Mi" }, limits: { memory: "128Mi" } },
            securityContext: { runAsNonRoot: true, runAsUser: 65532, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false },
          }],
        },
      },
    },
  });
  return docs.map((doc) => stringify(doc)).join("---\n");
}

export async function manifestsCommand(argv: string[], embedded: Embedded): Promise<number> {
  const own = readFlags(argv.filter((_, i) => isOwnManifestFlag(argv, i)), { name: { value: true }, image: { value: true }, "operator-namespace": { value: true } });
  const { flags, positionals } = parseRunFlags(argv.filter((_, i) => !isOwnManifestFlag(argv, i)));
  const settings = resolveSettings({ flags, cwd: process.cwd() });
  const manifests = embedded.handlersLoaded ? embedded.manifests : await loadHandlers(defaultHandlerPaths(positionals));
  const name = stringFlag(own.values, "name") ?? "kobun-operator";
  process.stdout.write(
    renderManifests({
      name,
      namespace: stringFlag(own.values, "operator-namespace") ?? "default",
      image: stringFlag(own.values, "image") ?? `${name}:latest`,
      settings,
      selectors: registry.selectors(),
      manifests,
    }),
  );
  return 0;
}

/** `--name`, `--image`, `--operator-namespace` (and their values) belong to manifests, not to run flags. */
function isOwnManifestFlag(argv: string[], index: number): boolean {
  const own = (arg: string | undefined) => arg !== undefined && /^--(name|image|operator-namespace)(=|$)/.test(arg);
  const arg = argv[index];
  return own(arg) || (own(argv[index - 1]) && !argv[index - 1]!.includes("=") && !arg!.startsWith("-"));
}
