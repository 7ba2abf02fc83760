// Real clients against the sandbox: kubectl (when installed) through the written kubeconfig,
// and stop() ending open watch streams.
import { describe, expect, test } from "bun:test";
import { startSandbox } from "../src/index.ts";
import { CM, WatchReader } from "./helpers.ts";

const hasKubectl = Bun.which("kubectl") !== null;

describe("clients", () => {
  test.skipIf(!hasKubectl)("kubectl works through the kubeconfig (TLS + token)", async () => {
    const sb = await startSandbox({ tls: true, token: "kt" });
    const kubectl = async (...args: string[]) => {
      // only the sandbox kubeconfig: no KUBECONFIG, a throwaway HOME
      const p = Bun.spawn(["kubectl", "--kubeconfig", sb.kubeconfigPath, ...args], {
        stdin: "ignore", stdout: "pipe", stderr: "pipe", env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: sb.kubeconfigPath + ".home" },
      });
      const [out, code] = await Promise.all([new Response(p.stdout).text(), p.exited]);
      return { out: out.trim(), code };
    };
    try {
      expect((await kubectl("create", "configmap", "kc", "--from-literal=a=1")).code).toBe(0);
      expect((await kubectl("patch", "configmap", "kc", "--type=merge", "-p", '{"data":{"b":"2"}}')).code).toBe(0);
      const got = await kubectl("get", "configmap", "kc", "-o", "json");
      expect(JSON.parse(got.out).data).toEqual({ a: "1", b: "2" });
      expect((await kubectl("delete", "configmap", "kc")).code).toBe(0);
      expect(sb.store.objects("", "configmaps", "default")).toEqual([]);
    } finally {
      await sb.stop();
    }
  }, 15000);

  test("stop() ends open watch streams cleanly and frees the port", async () => {
    const sb = await startSandbox();
    const w = await WatchReader.open(sb, `${CM}?watch=true`);
    expect(sb.stats.openWatches()).toBe(1);
    expect(sb.stats.openConnections()).toBeGreaterThanOrEqual(1);
    await sb.stop();
    expect(await w.next()).toBeUndefined();
    expect(sb.stats.openWatches()).toBe(0);
    await expect(fetch(`${sb.url}/version`)).rejects.toThrow();
  });
});
