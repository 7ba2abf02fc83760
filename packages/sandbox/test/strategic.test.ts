// Strategic merge patch for built-in kinds (issue 18). The expected orders are what
// kube-apiserver v1.37.2 answered to the same patches of a Deployment (test/cluster).
import { describe, expect, test } from "bun:test";
import { startSandbox } from "../src/index.ts";
import { strategicMergePatch } from "../src/strategic.ts";
import { api } from "./helpers.ts";

const dep = (...names: string[]) => ({ spec: { template: { spec: { containers: names.map((n) => ({ name: n, image: `${n}:1` })) } } } });
const patch = (containers: unknown[], extra: Record<string, unknown> = {}) => ({ spec: { template: { spec: { containers, ...extra } } } });
const containers = (o: any) => o.spec.template.spec.containers.map((c: any) => `${c.name}=${c.image}`);

describe("strategic merge patch", () => {
  test("containers merge by name; a new one goes before the server's it cannot be ordered against", () => {
    expect(containers(strategicMergePatch(dep("a", "b"), patch([{ name: "c", image: "c:1" }])))).toEqual(["c=c:1", "a=a:1", "b=b:1"]);
    expect(containers(strategicMergePatch(dep("a", "b"), patch([{ name: "b", image: "b:2" }, { name: "c", image: "c:1" }])))).toEqual(["a=a:1", "b=b:2", "c=c:1"]);
    expect(containers(strategicMergePatch(dep("a", "b"), patch([{ name: "c", image: "c:1" }, { name: "a", image: "a:2" }])))).toEqual(["c=c:1", "a=a:2", "b=b:1"]);
  });

  test("$patch: delete and replace in a list; $setElementOrder orders it", () => {
    expect(containers(strategicMergePatch(dep("a", "b"), patch([{ name: "b", $patch: "delete" }])))).toEqual(["a=a:1"]);
    expect(containers(strategicMergePatch(dep("a", "b"), patch([{ name: "z", image: "z:1" }, { $patch: "replace" }])))).toEqual(["z=z:1"]);
    const ordered = { spec: { template: { spec: { "$setElementOrder/containers": [{ name: "b" }, { name: "c" }, { name: "a" }], containers: [{ name: "c", image: "c:1" }] } } } };
    expect(containers(strategicMergePatch(dep("a", "b"), ordered))).toEqual(["b=b:1", "c=c:1", "a=a:1"]);
  });

  test("nested keyed lists merge (env by name, container ports by containerPort, service ports by port)", () => {
    const base = { spec: { template: { spec: { containers: [{ name: "a", env: [{ name: "X", value: "1" }], ports: [{ containerPort: 80 }] }] } } } };
    const out: any = strategicMergePatch(base, patch([{ name: "a", env: [{ name: "Y", value: "2" }], ports: [{ containerPort: 80, name: "http" }] }]));
    expect(out.spec.template.spec.containers[0].env).toEqual([{ name: "Y", value: "2" }, { name: "X", value: "1" }]);
    expect(out.spec.template.spec.containers[0].ports).toEqual([{ containerPort: 80, name: "http" }]);
    const svc: any = strategicMergePatch({ spec: { ports: [{ port: 80 }, { port: 443 }] } }, { spec: { ports: [{ port: 443, name: "https" }] } });
    expect(svc.spec.ports).toEqual([{ port: 80 }, { port: 443, name: "https" }]);
  });

  test("maps merge, null deletes, $retainKeys and $patch on maps; unkeyed lists are replaced", () => {
    const out: any = strategicMergePatch({ metadata: { labels: { a: "1", b: "2" } }, spec: { args: ["x", "y"], strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 1 } } } },
      { metadata: { labels: { b: null, c: "3" } }, spec: { args: ["z"], strategy: { $retainKeys: ["type"], type: "Recreate" } } });
    expect(out).toEqual({ metadata: { labels: { a: "1", c: "3" } }, spec: { args: ["z"], strategy: { type: "Recreate" } } });
    expect(strategicMergePatch({ spec: { a: 1, b: 2 } }, { spec: { $patch: "replace", c: 3 } })).toEqual({ spec: { c: 3 } });
    expect(strategicMergePatch({ spec: { a: 1 }, x: 1 }, { spec: { $patch: "delete" } })).toEqual({ x: 1 });
  });

  test("finalizers merge as a set; $deleteFromPrimitiveList removes", () => {
    const out: any = strategicMergePatch({ metadata: { finalizers: ["a", "b"] } }, { metadata: { finalizers: ["b", "c"] } });
    expect(out.metadata.finalizers).toEqual(["a", "b", "c"]);
    const removed: any = strategicMergePatch({ metadata: { finalizers: ["a", "b"] } }, { metadata: { "$deleteFromPrimitiveList/finalizers": ["a"] } });
    expect(removed.metadata.finalizers).toEqual(["b"]);
  });

  test("patch elements of one merge key merge into one element (Service ports 53/TCP and 53/UDP by port), as kube-apiserver does", () => {
    const live = { spec: { ports: [{ name: "dns-tcp", port: 53, protocol: "TCP", targetPort: 53 }] } };
    // what `kubectl apply` sends when a second protocol of port 53 is added to the file
    const sent: any = { spec: { ports: [{ name: "dns-udp", port: 53, protocol: "UDP" }, { name: "dns-tcp", port: 53, protocol: "TCP", targetPort: 53 }] } };
    sent.spec["$setElementOrder/ports"] = [{ port: 53 }, { port: 53 }];
    expect((strategicMergePatch(live, sent) as any).spec.ports).toEqual([{ name: "dns-tcp", port: 53, protocol: "TCP", targetPort: 53 }]);
  });

  test("an element without its merge key → 422", () => {
    expect(() => strategicMergePatch(dep("a"), patch([{ image: "x" }]))).toThrow(/does not contain declared merge key: name/);
  });

  test("PATCH application/strategic-merge-patch+json of a Deployment adds a sidecar, keeps the app container", async () => {
    const sb = await startSandbox();
    try {
      const path = "/apis/apps/v1/namespaces/default/deployments";
      // a Deployment the real server takes: its selector matches its template's labels
      const valid = { selector: { matchLabels: { app: "web" } }, template: { metadata: { labels: { app: "web" } }, ...dep("web").spec.template } };
      await api(sb, "POST", path, { metadata: { name: "web" }, spec: valid });
      const r = await api(sb, "PATCH", `${path}/web`, patch([{ name: "side", image: "side:1" }]), "application/strategic-merge-patch+json");
      expect(r.status).toBe(200);
      expect(containers(r.body)).toEqual(["side=side:1", "web=web:1"]);
    } finally {
      await sb.stop();
    }
  });
});
