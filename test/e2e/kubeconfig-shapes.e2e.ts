// A laptop against a remote cluster: every kubeconfig shape kubectl takes, kobun takes alike
// (cluster target only: its kube-apiserver is started with --client-ca-file, and an HTTP
// CONNECT proxy, a reverse proxy under a path prefix and a TCP forwarder stand before it).
// For each shape of harness/kubeconfig-shapes.ts: the real kubectl's `get ns`, then kobun's
// connect, LIST and WATCH; where kubectl fails kobun fails too, saying why, never showing a
// token or key. Then what only a run shows: an exec plugin's KUBERNETES_EXEC_INFO compared with
// what kubectl hands it, an expiring ExecCredential renewed, and `kobun run` (from source)
// with several files in KUBECONFIG merged as kubectl merges them, and --context.
//
//   cd test/e2e && KOBUN_E2E_TARGET=cluster bun test ./kubeconfig-shapes.e2e.ts

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeClient } from "../../src/kube/client.ts";
import { startCluster, type Cluster } from "../cluster/cluster.ts";
import { eventually, installCrds, NAMESPACES } from "./harness/kube.ts";
import { KUBECTL } from "./harness/kubectl.ts";
import { kubeconfigOf, SHAPES, writePlugins, type Shape, type ShapeWorld } from "./harness/kubeconfig-shapes.ts";
import { makeCertificates, startConnectProxy, startForwarder, startPrefixProxy, type Front } from "./harness/network-fronts.ts";
import { Operator, ROOT } from "./harness/operator.ts";
import { CONFIGMAPS } from "./harness/shard-spans.ts";
import { selectedTargets } from "./harness/target.ts";

// Only a control plane this suite starts has the client CA it needs.
const targets = selectedTargets().filter((t) => t === "cluster" && !process.env.KOBUN_E2E_KUBECONFIG);

/** kubectl with `args`, in an empty home and elsewhere than the kubeconfig (relative names must follow the file). */
async function kubectl(home: string, args: string[], env: Record<string, string> = {}) {
  const proc = Bun.spawn([KUBECTL, ...args, "--request-timeout=10s"], {
    cwd: home, env: { HOME: home, PATH: process.env.PATH ?? "/usr/bin:/bin", ...env }, stdin: "ignore", stdout: "pipe", stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

/** kobun's LIST of namespaces and a WATCH of ConfigMaps that sees one `admin` creates: the namespaces' names. */
async function listAndWatch(client: KubeClient, admin: KubeClient): Promise<string[]> {
  const names = (await client.list(NAMESPACES)).items.map((n) => n.metadata.name!).sort();
  const { metadata } = await client.list(CONFIGMAPS, { namespace: "default", limit: 1 });
  const stop = new AbortController();
  const bound = setTimeout(() => stop.abort(new Error("no watch event within 20 s")), 20_000);
  try {
    const response = await client.stream("/api/v1/namespaces/default/configmaps", { watch: true, resourceVersion: metadata.resourceVersion }, stop.signal);
    const name = `watched-${crypto.randomUUID().slice(0, 8)}`;
    await admin.create(CONFIGMAPS, "default", { apiVersion: "v1", kind: "ConfigMap", metadata: { name } });
    let text = "";
    for await (const chunk of response.body as ReadableStream<Uint8Array>) {
      text += new TextDecoder().decode(chunk);
      if (text.includes(`"name":"${name}"`)) break;
    }
    expect(text).toContain(`"type":"ADDED"`);
    return names;
  } finally {
    clearTimeout(bound);
    stop.abort();
  }
}

describe.each(targets)("kubeconfig shapes: kobun as kubectl (%s)", () => {
  let cluster: Cluster;
  let admin: KubeClient;
  let dir: string;
  let home: string;
  let world: ShapeWorld;
  const fronts: Record<"proxy" | "prefix" | "forwarder", Front> = {} as never;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "kobun-e2e-kubeconfigs-"));
    home = join(dir, "home");
    mkdirSync(home);
    const certs = makeCertificates(dir, { user: "alice", group: "system:masters", dnsName: "front.test" });
    cluster = await startCluster({ apiserverArgs: [`--client-ca-file=${certs.caFile}`], controllerManager: false, timeoutMs: 120_000 });
    admin = await KubeClient.connect({ kubeconfig: cluster.kubeconfigPath, retries: 2 });
    await installCrds(admin, join(ROOT, "handlers/kobunexample.crd.yaml")); // for `kobun run` of the example operator
    writeFileSync(join(dir, "server-ca.crt"), cluster.caPem);
    writeFileSync(join(dir, "token"), `${cluster.token}\n`);
    writePlugins(dir, cluster.token);
    fronts.proxy = await startConnectProxy();
    fronts.forwarder = await startForwarder("127.0.0.2", cluster.url.replace("https://", ""));
    fronts.prefix = await startPrefixProxy({ upstream: cluster.url, upstreamCa: cluster.caPem, prefix: "/clusters/east", cert: certs.frontCert, key: certs.frontKey });
    world = {
      dir, server: cluster.url, token: cluster.token, serverCa: cluster.caPem, clientCert: certs.clientCert, clientKey: certs.clientKey,
      frontCaFile: certs.caFile, proxyUrl: fronts.proxy.url, prefixUrl: fronts.prefix.url, forwardedUrl: fronts.forwarder.url,
    };
  }, 150_000);

  afterAll(async () => {
    admin?.close();
    for (const front of Object.values(fronts)) await front.stop();
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test.each(SHAPES.map((shape) => [shape.name, shape] as const))("%s", async (_name, shape: Shape) => {
    const path = join(dir, `${shape.name.replace(/[^a-z0-9]+/gi, "-")}.kubeconfig`);
    writeFileSync(path, shape.kubeconfig(world), { mode: 0o600 });
    const byKubectl = await kubectl(home, ["--kubeconfig", path, "get", "ns", "-o", "name"]);
    expect({ kubectl: byKubectl.code === 0 }).toEqual({ kubectl: shape.kubectl });
    const seen = shape.through ? fronts[shape.through].seen : 0;
    let client: KubeClient | undefined;
    let names: string[] | undefined;
    let failure: string | undefined;
    try {
      client = await KubeClient.connect({ kubeconfig: path, retries: 0, requestTimeoutMs: 10_000 });
      names = await listAndWatch(client, admin);
    } catch (error) {
      failure = String((error as Error)?.message ?? error);
    } finally {
      client?.close();
    }
    if (shape.refusal) {
      expect(failure ?? "(kobun got through)").toMatch(shape.refusal);
      for (const secret of [cluster.token, world.clientKey.split("\n")[1]!]) expect(failure).not.toContain(secret);
      return;
    }
    expect(failure).toBeUndefined();
    expect(names!.map((n) => `namespace/${n}`).join("\n")).toBe(byKubectl.stdout.trim());
    if (shape.through) expect(fronts[shape.through].seen).toBeGreaterThan(seen);
    if (shape.name.includes("default namespace")) expect(client!.connection.namespace).toBe("kube-public");
  }, 60_000);

  test("an exec plugin is handed what kubectl hands it: KUBERNETES_EXEC_INFO with the cluster (provideClusterInfo), env", async () => {
    const config = (infoFile: string) => kubeconfigOf(
      [`server: ${world.server}`, "certificate-authority: server-ca.crt", "tls-server-name: kubernetes", "extensions:", "- name: client.authentication.k8s.io/exec", "  extension: {audience: east, tier: 2}"],
      ["exec: {command: ./plugin.sh, apiVersion: client.authentication.k8s.io/v1, interactiveMode: IfAvailable, provideClusterInfo: true,",
        `  args: [client.authentication.k8s.io/v1], env: [{name: INFO_FILE, value: ${infoFile}}]}`],
    );
    const [forKubectl, forKobun] = [join(dir, "info-kubectl.json"), join(dir, "info-kobun.json")];
    writeFileSync(join(dir, "info-kubectl.kubeconfig"), config(forKubectl));
    writeFileSync(join(dir, "info-kobun.kubeconfig"), config(forKobun));
    expect((await kubectl(home, ["--kubeconfig", join(dir, "info-kubectl.kubeconfig"), "get", "ns"])).code).toBe(0);
    const client = await KubeClient.connect({ kubeconfig: join(dir, "info-kobun.kubeconfig"), retries: 0 });
    client.close();
    const asked = JSON.parse(readFileSync(forKobun, "utf8"));
    expect(asked).toEqual(JSON.parse(readFileSync(forKubectl, "utf8")));
    expect(asked.spec.cluster.config).toEqual({ audience: "east", tier: 2 });
  }, 60_000);

  test("an expiring ExecCredential is renewed before its expirationTimestamp, and requests go on", async () => {
    const runs = join(dir, "expiring-runs");
    const path = join(dir, "expiring.kubeconfig");
    // 11 s: inside kobun's 10 s renewal margin after about a second.
    writeFileSync(path, kubeconfigOf([`server: ${world.server}`, "certificate-authority: server-ca.crt"], [
      "exec: {command: ./plugin.sh, apiVersion: client.authentication.k8s.io/v1, interactiveMode: Never, args: [client.authentication.k8s.io/v1],",
      `  env: [{name: RUNS_FILE, value: ${runs}}, {name: EXPIRES_IN, value: "11"}]}`,
    ]));
    const client = await KubeClient.connect({ kubeconfig: path, retries: 0 });
    try {
      await client.list(NAMESPACES);
      const count = () => readFileSync(runs, "utf8").trim().split("\n").length;
      expect(count()).toBe(1);
      await eventually("the plugin run again", async () => (await client.list(NAMESPACES), count() >= 2 || undefined), { timeoutMs: 15_000, intervalMs: 200 });
    } finally {
      client.close();
    }
  }, 60_000);

  describe("kobun run (from source) with KUBECONFIG naming several files, merged as kubectl merges them", () => {
    // The first file holds the user's good token and the current-context, the second the cluster, the
    // contexts and a same-named user with a bad token (the first file's wins), and a context of its own.
    const files = () => {
      const first = join(dir, "merge-first.yaml");
      const second = join(mkdtempSync(join(dir, "merge-elsewhere-")), "second.yaml");
      writeFileSync(first, `apiVersion: v1\nkind: Config\ncurrent-context: laptop\nusers:\n- name: me\n  user: {token: ${world.token}}\n`);
      writeFileSync(join(second, "..", "server-ca.crt"), world.serverCa); // relative to the second file's own directory
      writeFileSync(second, [
        "apiVersion: v1", "kind: Config", "current-context: stale",
        "clusters:", "- name: remote", `  cluster: {server: "${world.server}", certificate-authority: server-ca.crt}`,
        "contexts:", "- name: laptop", "  context: {cluster: remote, user: me}", "- name: stale", "  context: {cluster: remote, user: stale}",
        "users:", "- name: me", "  user: {token: stale-token}", "- name: stale", "  user: {token: stale-token}", "",
      ].join("\n"));
      return `${first}:${second}`;
    };
    const run = (kubeconfigs: string, extra: string[] = []) => new Operator("merged", process.execPath, [
      join(ROOT, "src/cli.ts"), "run", join(ROOT, "handlers"), "--standalone", "-n", "default", ...extra,
    ], { KUBECONFIG: kubeconfigs });

    test("the first file's user and current-context, the second's cluster: kubectl and kobun both get through", async () => {
      const kubeconfigs = files();
      expect((await kubectl(home, ["get", "ns"], { KUBECONFIG: kubeconfigs })).code).toBe(0);
      const op = run(kubeconfigs);
      try {
        await op.waitForLog(/operator ready/, 30_000);
      } finally {
        await op.stop("SIGTERM", 10_000);
      }
    }, 60_000);

    test("--context picks the second file's context, whose token is refused: both fail, kobun with exit 4 and no token", async () => {
      const kubeconfigs = files();
      expect((await kubectl(home, ["get", "ns", "--context", "stale"], { KUBECONFIG: kubeconfigs })).code).not.toBe(0);
      const op = run(kubeconfigs, ["--context", "stale"]);
      expect(await op.exited(30_000)).toBe(4);
      const said = op.lines.join("\n");
      expect(said).toMatch(/cannot authenticate to the API server.*as stale/);
      expect(said).not.toContain(world.token);
      expect(said).not.toContain("stale-token");
    }, 60_000);
  });
});
