// The kobun operator of bench/reconcile.ts: one reconcile per BenchParent that server-side
// applies its three children (a ConfigMap, a headless Service, a Deployment), each with a
// controller owner reference, then marks the parent ready (kobun adds observedGeneration).
// bench/peers/controller-runtime/reconcile/main.go is the same controller in Go.

import { adopt, on, resource } from "kobun";

const PARENTS = "benchparents.bench.kobun.dev/v1";

interface ParentSpec { replicas: number; image: string; message: string }

on.reconcile(PARENTS, async function parents({ body, name, spec, api, patch }) {
  const { replicas, image, message } = spec as ParentSpec;
  const labels = { app: name };
  const owner = { owner: body };
  const config = { apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data: { message } };
  const service = {
    apiVersion: "v1", kind: "Service", metadata: { name },
    spec: { clusterIP: "None", selector: labels, ports: [{ name: "http", port: 80, targetPort: 8080 }] },
  };
  const deployment = {
    apiVersion: "apps/v1", kind: "Deployment", metadata: { name },
    spec: {
      replicas, selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: [{ name: "app", image, ports: [{ containerPort: 8080 }] }] } },
    },
  };
  await Promise.all([config, service, deployment].map((child) => api.apply(adopt(child, owner), { force: true })));
  patch.status.ready = true;
}, { owns: [resource.configmaps, resource.services, resource.deployments] });
