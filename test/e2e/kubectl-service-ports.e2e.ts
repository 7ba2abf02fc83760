// Service ports in server-side and client-side apply (issue 18), run by the real kubectl on both
// targets: server-side apply keys them by port AND protocol (the schema's list-map keys, a left-out
// protocol taking its default TCP), so 53/TCP and 53/UDP are two ports; strategic merge patch
// (client-side apply) keys them by port alone, so adding 53/UDP to a file that had 53/TCP leaves
// one port, as on the real server. Finalizers are a set and the selector an atomic map to
// server-side apply. The expected values are what kube-apiserver v1.37.2 answered.
//
//   cd test/e2e && KOBUN_E2E_TARGET=sandbox bun test ./kubectl-service-ports.e2e.ts

import { describe, expect, test } from "bun:test";
import { createNamespace } from "./harness/kube.ts";
import { kubectlTarget } from "./harness/kubectl.ts";
import { selectedTargets, type TargetName } from "./harness/target.ts";

const service = (ns: string, name: string, ports: string[], extra = "") =>
  `apiVersion: v1\nkind: Service\nmetadata: {name: ${name}, namespace: ${ns}${extra}}\nspec:\n  selector: {app: dns}\n  ports:\n${ports.map((p) => `  - ${p}\n`).join("")}`;
const TCP = "{name: dns-tcp, port: 53, targetPort: 53}";
const UDP = "{name: dns-udp, port: 53, protocol: UDP, targetPort: 53}";
const summary = (json: string) => {
  const svc = JSON.parse(json);
  return { ports: svc.spec.ports.map((p: any) => `${p.name} ${p.port}/${p.protocol}->${p.targetPort}`), owned: svc.metadata.managedFields.map((m: any) => [m.manager, m.fieldsV1]) };
};
const item = (protocol: boolean) => ({ ".": {}, "f:name": {}, "f:port": {}, ...(protocol ? { "f:protocol": {} } : {}), "f:targetPort": {} });

describe.each(selectedTargets())("Service ports in kubectl apply against %s", (targetName: TargetName) => {
  const need = kubectlTarget(targetName, []);

  test("apply --server-side: 53/TCP and 53/UDP are two ports, keyed by port and protocol; finalizers a set, the selector atomic", async () => {
    const { t, k } = need();
    const ns = await createNamespace(t.client);
    await k.ok(["apply", "--server-side", "-f", k.file(`ssa-${ns}.yaml`, service(ns, "dns", [TCP, UDP], ", finalizers: [e2e.kobun.dev/keep]"))]);
    const get = async () => summary(await k.ok(["get", "svc", "dns", "-n", ns, "-o", "json", "--show-managed-fields"]));
    expect(await get()).toEqual({
      ports: ["dns-tcp 53/TCP->53", "dns-udp 53/UDP->53"],
      owned: [["kubectl", {
        "f:metadata": { "f:finalizers": { 'v:"e2e.kobun.dev/keep"': {} } },
        "f:spec": { "f:ports": { 'k:{"port":53,"protocol":"TCP"}': item(false), 'k:{"port":53,"protocol":"UDP"}': item(true) }, "f:selector": {} },
      }]],
    });
    // applying only 53/UDP again drops 53/TCP: this manager owned it and no longer applies it
    await k.ok(["apply", "--server-side", "-f", k.file(`ssa2-${ns}.yaml`, service(ns, "dns", ["{name: dns-udp, port: 53, protocol: UDP, targetPort: 5353}"]))]);
    expect(await get()).toEqual({ ports: ["dns-udp 53/UDP->5353"], owned: [["kubectl", { "f:spec": { "f:ports": { 'k:{"port":53,"protocol":"UDP"}': item(true) }, "f:selector": {} } }]] });
  }, 60_000);

  test("client-side apply: adding 53/UDP to a file with 53/TCP leaves one port, a mix of both (strategic merge patch keys ports by port)", async () => {
    const { t, k } = need();
    const ns = await createNamespace(t.client);
    expect(await k.ok(["apply", "-f", k.file(`csa-${ns}.yaml`, service(ns, "dnsc", [TCP]))])).toBe("service/dnsc created\n");
    expect(await k.ok(["apply", "-f", k.file(`csa2-${ns}.yaml`, service(ns, "dnsc", [TCP, UDP]))])).toBe("service/dnsc configured\n");
    const svc = JSON.parse(await k.ok(["get", "svc", "dnsc", "-n", ns, "-o", "json"]));
    // both patch elements merge into the one live port of key 53: its name from the last, the protocol from the first
    expect(svc.spec.ports).toEqual([{ name: "dns-tcp", port: 53, protocol: "UDP", targetPort: 53 }]);
  }, 60_000);
});
