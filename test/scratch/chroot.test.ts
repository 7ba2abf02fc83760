// The FROM-scratch property without a Docker engine: lay out exactly the Dockerfile's final
// image (test/scratch/rootfs.sh: the binary, the libraries ldd names, CA certificates) in an
// empty directory, chroot into it as user 65532 (the image's USER), and run `kobun version` and
// `kobun run` against a sandbox on 127.0.0.1.
//
// What a container runtime adds to every container, the test adds too: /proc (Bun reads
// /proc/self/maps at start-up and aborts without it), mounted in a private mount namespace
// (`unshare --mount`) so nothing is left mounted on the host. Needs root, chroot and unshare:
// without them the test fails with the reason under CI=true, and is skipped with a message
// otherwise.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { KubeClient } from "../../src/kube/client.ts";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { EXAMPLES, eventually, installCrds } from "../e2e/harness/kube.ts";

const root = resolve(import.meta.dir, "../..");

function missingPrerequisite(): string | undefined {
  if (process.platform !== "linux") return `needs Linux (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return "needs root (chroot and mount)";
  for (const tool of ["chroot", "unshare", "mount", "ldd"]) {
    if (spawnSync("sh", ["-c", `command -v ${tool}`]).status !== 0) return `needs \`${tool}\` on PATH`;
  }
  const probe = spawnSync("unshare", ["--mount", "true"]);
  if (probe.status !== 0) return `\`unshare --mount\` is not permitted here: ${String(probe.stderr).trim()}`;
  return undefined;
}

const missing = missingPrerequisite();
const inCI = process.env.CI === "true";
if (missing && inCI) {
  test("FROM scratch (chroot): prerequisites", () => {
    throw new Error(`the chroot test cannot run here: ${missing}`);
  });
} else if (missing) {
  console.warn(`test/scratch/chroot.test.ts skipped: ${missing}`);
  test.skip(`FROM scratch (chroot): ${missing}`, () => {});
}

(missing ? describe.skip : describe)("FROM scratch (chroot)", () => {
  let work = "";
  let rootfs = "";
  let files: string[] = [];
  let sandbox: Sandbox | undefined;
  let client: KubeClient | undefined;

  /** Runs /kobun inside the chroot as 65532:65532 with /proc mounted privately; same PID as kobun. */
  function inChroot(args: string[]) {
    const script = 'mount -t proc proc "$0/proc" && exec chroot --userspec=65532:65532 "$0" /kobun "$@"';
    return Bun.spawn(["unshare", "--mount", "sh", "-c", script, rootfs, ...args], {
      env: { HOME: "/" },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
  }

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "kobun-scratch-"));
    // The binary the image would hold: the example operator (handlers/), built fresh unless given.
    let binary = process.env.KOBUN_SCRATCH_BINARY;
    if (!binary) {
      binary = join(work, "kobun");
      const build = Bun.spawn([process.execPath, "run", "build.ts", "--outfile", binary], { cwd: root, stdout: "pipe", stderr: "pipe" });
      if ((await build.exited) !== 0) throw new Error(`bun run build.ts failed:\n${await new Response(build.stderr).text()}`);
    }
    rootfs = join(work, "rootfs");
    const lay = Bun.spawn(["sh", join(root, "test/scratch/rootfs.sh"), binary, rootfs], { stdout: "pipe", stderr: "pipe" });
    const listing = await new Response(lay.stdout).text();
    if ((await lay.exited) !== 0) throw new Error(`rootfs.sh failed:\n${await new Response(lay.stderr).text()}`);
    files = listing.trim().split("\n");

    // What the container runtime provides: a /proc mount point. And the test's kubeconfig.
    mkdirSync(join(rootfs, "proc"));
    sandbox = await startSandbox();
    copyFileSync(sandbox.kubeconfigPath, join(rootfs, "kubeconfig"));
    chmodSync(join(rootfs, "kubeconfig"), 0o644);
    client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath });
    await installCrds(client, join(root, "handlers/kobunexample.crd.yaml"));
  }, 120_000);

  afterAll(async () => {
    client?.close();
    await sandbox?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test("the image holds only the binary, its shared libraries and CA certificates", () => {
    expect(files).toContain("/kobun");
    expect(files).toContain("/etc/ssl/certs/ca-certificates.crt");
    const others = files.filter((f) => f !== "/kobun" && f !== "/etc/ssl/certs/ca-certificates.crt");
    for (const f of others) expect(f).toMatch(/^\/lib(64|\/[^/]+)?\/(ld-linux|lib)[^/]*\.so(\.\d+)*$/);
    if (process.arch === "x64") {
      expect(others.sort()).toEqual([
        "/lib/x86_64-linux-gnu/libc.so.6",
        "/lib/x86_64-linux-gnu/libdl.so.2",
        "/lib/x86_64-linux-gnu/libm.so.6",
        "/lib/x86_64-linux-gnu/libpthread.so.0",
        "/lib64/ld-linux-x86-64.so.2",
      ]);
    }
  });

  test("kobun version runs in the chroot as user 65532", async () => {
    const p = inChroot(["version"]);
    const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    expect({ code, err }).toEqual({ code: 0, err: "" });
    expect(out).toMatch(/^kobun \d+\.\d+\.\d+/);
  }, 20_000);

  test("kobun run --kubeconfig /kubeconfig --standalone -A handles the example object; SIGTERM → exit 0", async () => {
    const c = client!;
    const name = "scratch-example";
    await c.create(EXAMPLES, "default", { apiVersion: "kobun.dev/v1", kind: "KobunExample", metadata: { name, namespace: "default" }, spec: { field: "value" } });
    const p = inChroot(["run", "--kubeconfig", "/kubeconfig", "--standalone", "-A"]);
    let log = "";
    const drained = (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of p.stderr) log += decoder.decode(chunk, { stream: true });
    })();
    try {
      const handled = await eventually("status.create_fn from the chrooted operator", async () => {
        const o = await c.get(EXAMPLES, "default", name);
        return o.status?.create_fn ? o : undefined;
      }, { timeoutMs: 15_000 }).catch((e) => { throw new Error(`${e.message}\n--- kobun stderr\n${log}`); });
      expect(handled.status!.create_fn.message).toBe(`hello ${name}`);
      const t0 = performance.now();
      p.kill("SIGTERM");
      const code = await Promise.race([p.exited, Bun.sleep(10_000).then(() => "timeout" as const)]);
      if (code === "timeout") throw new Error(`no exit within 10 s of SIGTERM\n--- kobun stderr\n${log}`);
      expect(code).toBe(0);
      expect(performance.now() - t0).toBeLessThan(5_000);
    } finally {
      if (p.exitCode === null) p.kill("SIGKILL");
      await p.exited;
      await drained;
    }
  }, 60_000);
});
