// Regenerates packages/sandbox/src/kube-protos.json: the protobuf descriptor (protobufjs JSON) of the
// Kubernetes kinds the sandbox accepts as `application/vnd.kubernetes.protobuf` request bodies,
// parsed from the `generated.proto` files of k8s.io/api and k8s.io/apimachinery in the Go module
// cache, at the versions test/cluster/go.mod pins (the same as kube-apiserver's), and pruned to
// the messages reachable from those kinds. And packages/sandbox/src/openapi-v2-protos.json: gnostic's
// openapi_v2 messages (github.com/google/gnostic-models/openapiv2/OpenAPIv2.proto, at the
// version go.mod pins), the protobuf form of /openapi/v2 that client-go asks for.
//
//   bun test/cluster/gen-proto.ts          # after test/cluster/build.sh (or `go mod download`)

import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import protobuf from "protobufjs";

const here = import.meta.dir;
const out = resolve(here, "../../packages/sandbox/src/kube-protos.json");
const go = process.env.GO ?? (spawnSync("which", ["go"]).status === 0 ? "go" : "/usr/local/go/bin/go");

/** groups (proto package under k8s.io.api) and the kinds of each that the sandbox serves or reviews */
const KINDS: Record<string, string[]> = {
  "core/v1": ["Namespace", "ConfigMap", "Secret", "ServiceAccount", "Event", "Pod", "Service", "ReplicationController",
    "PersistentVolumeClaim"],
  "networking/v1": ["Ingress", "NetworkPolicy"],
  "policy/v1": ["PodDisruptionBudget"],
  "apps/v1": ["Deployment", "DaemonSet", "ReplicaSet", "StatefulSet"],
  "batch/v1": ["Job", "CronJob"],
  "autoscaling/v2": ["HorizontalPodAutoscaler"],
  "coordination/v1": ["Lease"],
  "events/v1": ["Event"],
  "rbac/v1": ["ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"],
  "authorization/v1": ["SelfSubjectAccessReview", "SelfSubjectRulesReview"],
  "authentication/v1": ["SelfSubjectReview", "TokenRequest"],
};

function moduleDir(path: string): string {
  const r = spawnSync(go, ["list", "-m", "-f", "{{.Dir}}", path], { cwd: here, encoding: "utf8" });
  if (r.status !== 0 || !r.stdout.trim()) throw new Error(`go list -m ${path} failed (run test/cluster/build.sh first): ${r.stderr}`);
  return r.stdout.trim();
}

const dirs: Record<string, string> = { "k8s.io/api/": moduleDir("k8s.io/api"), "k8s.io/apimachinery/": moduleDir("k8s.io/apimachinery") };
const root = new protobuf.Root();
root.resolvePath = (_origin, target) => {
  for (const [prefix, dir] of Object.entries(dirs)) if (target.startsWith(prefix)) return join(dir, target.slice(prefix.length));
  return target;
};
const roots: string[] = ["k8s.io.apimachinery.pkg.runtime.Unknown", "k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions"];
const files = ["k8s.io/apimachinery/pkg/runtime/generated.proto", "k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto"];
for (const [gv, kinds] of Object.entries(KINDS)) {
  files.push(`k8s.io/api/${gv}/generated.proto`);
  for (const kind of kinds) roots.push(`k8s.io.api.${gv.replace("/", ".")}.${kind}`);
}
root.loadSync(files, { keepCase: true });
root.resolveAll();

// every message reachable from the roots
const keep = new Set<string>();
const visit = (type: protobuf.Type) => {
  const name = type.fullName.slice(1);
  if (keep.has(name)) return;
  keep.add(name);
  for (const field of type.fieldsArray) if (field.resolvedType instanceof protobuf.Type) visit(field.resolvedType);
};
for (const name of roots) visit(root.lookupType(name));

/** the namespace tree of protobufjs JSON, with only the kept messages */
function prune(ns: protobuf.NamespaceBase): Record<string, unknown> | undefined {
  const nested: Record<string, unknown> = {};
  for (const child of ns.nestedArray) {
    if (child instanceof protobuf.Type) {
      // the whole type: its `edition: "proto2"` gives fields explicit presence (a sent 0 is kept)
      if (keep.has(child.fullName.slice(1))) nested[child.name] = child.toJSON();
    } else if (child instanceof protobuf.Namespace) {
      const sub = prune(child);
      if (sub) nested[child.name] = sub;
    }
  }
  return Object.keys(nested).length ? { nested } : undefined;
}

writeFileSync(out, JSON.stringify(prune(root)) + "\n");
console.log(`wrote ${out}: ${keep.size} messages from ${files.length} generated.proto files`);

// gnostic imports google/protobuf/any.proto, which protobufjs carries itself
const gnostic = new protobuf.Root().loadSync(join(moduleDir("github.com/google/gnostic-models"), "openapiv2/OpenAPIv2.proto"), { keepCase: true });
gnostic.resolveAll();
const v2out = resolve(here, "../../packages/sandbox/src/openapi-v2-protos.json");
writeFileSync(v2out, JSON.stringify(gnostic.toJSON()) + "\n");
console.log(`wrote ${v2out}: ${(gnostic.lookup("openapi.v2") as protobuf.Namespace).nestedArray.length} openapi.v2 messages`);
