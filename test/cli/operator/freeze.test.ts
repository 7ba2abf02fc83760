// `kobun freeze` / `kobun resume`: a manual peering record for maintenance windows.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { env, type Env } from "../../peering/helpers.ts";

const repo = join(import.meta.dir, "../../..");
let e: Env;
beforeAll(async () => (e = await env()));
afterAll(() => e.stop());

/** Runs the CLI asynchronously: the sandbox lives in this process and must keep answering. */
async function kobun(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const child = Bun.spawn([process.execPath, join(repo, "src/cli.ts"), ...args], {
    cwd: repo, env: { PATH: process.env.PATH ?? "", HOME: "/nonexistent" }, stdout: "pipe", stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, out, err };
}

const peerings = { group: "kobun.dev", version: "v1", plural: "kobunpeerings", kind: "KobunPeering", namespaced: true, statusSubresource: false };

test("freeze writes a high-priority record with its message; resume removes it", async () => {
  const frozen = await kobun(["freeze", "--kubeconfig", e.sandbox.kubeconfigPath, "--peering", "default", "-n", "default", "--lifetime", "600", "--message", "upgrading"]);
  expect(frozen.err).toBe("");
  expect(frozen.code).toBe(0);
  const record = Object.values((await e.client.get(peerings, "default", "default")).status ?? {}) as { priority: number; lifetime: number; message?: string }[];
  expect(record).toHaveLength(1);
  expect(record[0]).toMatchObject({ priority: 100, lifetime: 600, message: "upgrading" });

  const resumed = await kobun(["resume", "--kubeconfig", e.sandbox.kubeconfigPath, "--peering", "default", "-n", "default"]);
  expect(resumed.code).toBe(0);
  expect(Object.keys((await e.client.get(peerings, "default", "default")).status ?? {})).toEqual([]);
}, 15_000);

test("freeze --dev freezes with the priority of kobun run --dev (666); with --priority too it is a usage error", async () => {
  const args = ["--kubeconfig", e.sandbox.kubeconfigPath, "--peering", "dev", "-n", "default"];
  const frozen = await kobun(["freeze", ...args, "--lifetime", "60", "--dev"]);
  expect(frozen.err).toBe("");
  expect(frozen.code).toBe(0);
  const record = Object.values((await e.client.get(peerings, "default", "dev")).status ?? {}) as { priority: number }[];
  expect(record).toEqual([expect.objectContaining({ priority: 666, lifetime: 60 })]);
  expect((await kobun(["resume", ...args])).code).toBe(0);
  const both = await kobun(["freeze", ...args, "--lifetime", "60", "--dev", "--priority", "5"]);
  expect(both.code).toBe(2);
  expect(both.err).toContain("--dev freezes with priority 666: give --dev or --priority, not both");
}, 15_000);

test("freeze without --lifetime is a usage error (exit 2) naming the flag", async () => {
  const r = await kobun(["freeze", "--kubeconfig", e.sandbox.kubeconfigPath, "-n", "default"]);
  expect(r.code).toBe(2);
  expect(r.err).toContain("--lifetime");
});

test("an unknown command is a usage error listing the commands", async () => {
  const r = await kobun(["frobnicate"]);
  expect(r.code).toBe(2);
  expect(r.err).toContain("unknown command \"frobnicate\"");
});

test("freeze and resume where the peering CRDs are not installed: exit 5, naming the resource and where to get it", async () => {
  const bare = await env({ crds: [] });
  try {
    const [frozen, resumed] = await Promise.all([
      kobun(["freeze", "--kubeconfig", bare.sandbox.kubeconfigPath, "--peering", "p", "-n", "default", "--lifetime", "60"]),
      kobun(["resume", "--kubeconfig", bare.sandbox.kubeconfigPath, "--peering", "p", "--clusterwide"]),
    ]);
    expect({ code: frozen.code, err: frozen.err }).toEqual({
      code: 5,
      err: "kobun: kobunpeerings.kobun.dev is not served by the API server: install the peering CRDs first " +
        "(kobun manifests prints them, unless --standalone)\n",
    });
    expect(resumed.code).toBe(5);
    expect(resumed.err).toStartWith("kobun: clusterkobunpeerings.kobun.dev is not served by the API server");
  } finally {
    await bare.stop();
  }
}, 15_000);
