// The Deployment of `kobun manifests`: one replica of the binary under its ServiceAccount,
// admitted by Pod Security `restricted` (non-root, no privilege escalation, every capability
// dropped, the runtime's default seccomp profile), with a read-only root filesystem.

import { Document, isMap } from "yaml";
import { fixedNamespaces, type Settings } from "../../config/index.ts";
import type { KubeObject } from "../../kube/index.ts";
import { CONFIG_DIR, CONFIG_FILE } from "./carried.ts";

/**
 * Peak RSS of the example operator's binary (Bun 1.4.5) handling 10,000 tiny objects from a
 * cold start against a real kube-apiserver v1.37.2: the initial LIST, one cycle, one PATCH and
 * one Event per object. `bun bench/memory.ts --target cluster`, under `/usr/bin/time -v`:
 * 188, 174, 176 MiB (the sandbox: 143, 150, 156). 128 Mi, the limit before, was an OOM kill.
 */
export const MEASURED_PEAK_MIB = 188;
/** The limit: twice the measured peak, rounded up to 64 Mi, for heavier handlers and objects. */
export const MEMORY_LIMIT_MIB = Math.ceil((MEASURED_PEAK_MIB * 2) / 64) * 64;

const MEMORY_NOTE =
  ` limits.memory: ${MEMORY_LIMIT_MIB}Mi is twice the ${MEASURED_PEAK_MIB} MiB peak RSS` +
  " measured with 10,000 tiny objects" +
  "\n (kobun's bench/memory.ts, README \"Deploying\"); raise it for larger or more objects, or heavier handlers.";

/** The environment variables kobun sets itself: `--env` may not name them. */
export const OWN_ENV = ["POD_ID", "POD_NAMESPACE"];

/** The container's one HTTP port: probes and metrics. */
const PROBE_PORT = 8080;

export interface DeploymentOptions {
  name: string;
  namespace: string;
  image: string;
  settings: Settings;
  /** Mount the ConfigMap `name` (carried.ts) and run with it as `--config`. */
  config: boolean;
  /** Serve the handlers' webhooks on 9443, behind the Service `name` (webhooks.ts). */
  webhooks?: boolean;
  /** The operator's own settings (`--env NAME=VALUE`), after kobun's POD_ID and POD_NAMESPACE. */
  env?: readonly { name: string; value: string }[];
}

/** The Deployment as an object, for tests and for rendering. */
export function deploymentObject(options: DeploymentOptions): KubeObject {
  const { name, namespace, image, settings, config, webhooks = false, env = [] } = options;
  const args = runArgs(settings);
  if (config) args.splice(1, 0, `--config=${CONFIG_DIR}/${CONFIG_FILE}`);
  // The configurations and the Service are named after the operator; its Pods serve them all.
  if (webhooks) {
    args.push("--webhooks-listen=0.0.0.0:9443");
    if (name !== settings.webhooks.name) args.push(`--webhooks-name=${name}`);
  }
  return {
    apiVersion: "apps/v1", kind: "Deployment", metadata: { name, namespace },
    spec: {
      replicas: deploymentReplicas(settings),
      strategy: { type: "Recreate" },
      selector: { matchLabels: { app: name } },
      template: {
        // prometheus.io/* for annotation-based scraping; a PodMonitor selects `app` and the port named "metrics".
        metadata: {
          labels: { app: name },
          annotations: {
            "prometheus.io/scrape": "true", "prometheus.io/port": String(PROBE_PORT), "prometheus.io/path": "/metrics",
          },
        },
        spec: {
          serviceAccountName: name,
          ...(config ? { volumes: [{ name: "config", configMap: { name } }] } : {}),
          securityContext: {
            runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, seccompProfile: { type: "RuntimeDefault" },
          },
          containers: [{
            name, image, args,
            ...(config ? { volumeMounts: [{ name: "config", mountPath: CONFIG_DIR, readOnly: true }] } : {}),
            // POD_ID names this replica in peering; POD_NAMESPACE is where the operator keeps
            // its Lease (lease mode), which is where `kobun manifests` grants it.
            env: [
              { name: "POD_ID", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
              { name: "POD_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
              ...env,
            ],
            // One listener serves /healthz, /readyz and /metrics (README "Running in production").
            ports: [
              { name: "metrics", containerPort: PROBE_PORT, protocol: "TCP" },
              ...(webhooks ? [{ name: "webhooks", containerPort: 9443, protocol: "TCP" }] : []),
            ],
            livenessProbe: { httpGet: { path: "/healthz", port: PROBE_PORT } },
            readinessProbe: { httpGet: { path: "/readyz", port: PROBE_PORT } },
            resources: { requests: { cpu: "10m", memory: "48Mi" }, limits: { memory: `${MEMORY_LIMIT_MIB}Mi` } },
            securityContext: {
              runAsNonRoot: true, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false,
              capabilities: { drop: ["ALL"] },
            },
          }],
        },
      },
    },
  };
}

/** The Deployment as YAML, with the reason for its memory limit beside it. */
export function renderDeployment(options: DeploymentOptions): string {
  const doc = new Document(deploymentObject(options));
  const resources = doc.getIn(["spec", "template", "spec", "containers", 0, "resources"]);
  if (isMap(resources)) resources.commentBefore = MEMORY_NOTE;
  return doc.toString();
}

/** `kobun run` arguments for the same namespaces and peering choices the RBAC was made for. */
/** One replica, or with sharding its N ("auto": 2 to start with; scale it as you like). */
export function deploymentReplicas(settings: Settings): number {
  const { enabled, replicas } = settings.sharding;
  return !enabled ? 1 : replicas === "auto" ? 2 : replicas;
}

function runArgs(settings: Settings): string[] {
  const fixed = fixedNamespaces(settings);
  const { include, exclude, allNamespaces } = settings.namespaces;
  const namespaces = allNamespaces ? ["--all-namespaces", ...exclude.map((ns) => `--namespace=!${ns}`)]
    : [...(fixed ?? include).map((ns) => `--namespace=${ns}`), ...exclude.map((ns) => `--namespace=!${ns}`)];
  // Only what differs from the defaults: a named --peering also makes the peering mandatory.
  const { standalone, name, priority } = settings.peering;
  const peering = standalone ? ["--standalone"]
    : [...(name !== "default" ? [`--peering=${name}`] : []), ...(priority !== 0 ? [`--priority=${priority}`] : [])];
  return ["run", ...namespaces, ...peering, `--liveness=http://0.0.0.0:${PROBE_PORT}/healthz`];
}
