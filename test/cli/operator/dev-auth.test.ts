// `kobun dev` runs its sandbox API server with a random token per run: without it every
// request is 401 (the Status a kube-apiserver sends), and the token is written only into
// the 0600 kubeconfig it prints the path of, never to the terminal (issue 11, defect 8).
// That kubeconfig is all kubectl needs.

import { expect, test } from "bun:test";
import { readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { parse } from "yaml";

const repo = join(import.meta.dir, "../../..");

/** Reads a stream until `done(text so far)` holds; the rest is drained in the background. */
async function readUntil(stream: ReadableStream<Uint8Array>, done: (text: string) => boolean, timeoutMs: number): Promise<{ text: string; rest: Promise<string> }> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = "";
  const deadline = setTimeout(() => reader.cancel(), timeoutMs);
  while (!done(text)) {
    const { done: ended, value } = await reader.read();
    if (ended) break;
    text += decoder.decode(value, { stream: true });
  }
  clearTimeout(deadline);
  const rest = (async () => {
    let more = "";
    for (;;) {
      const { done: ended, value } = await reader.read();
      if (ended) return more;
      more += decoder.decode(value, { stream: true });
    }
  })();
  return { text, rest };
}

test("kobun dev: the sandbox wants the per-run token from the 0600 kubeconfig; kubectl works with that kubeconfig", async () => {
  const child = Bun.spawn([process.execPath, join(repo, "src/cli.ts"), "dev"], {
    cwd: repo, env: { PATH: process.env.PATH ?? "", HOME: "/nonexistent" }, stdout: "pipe", stderr: "pipe",
  });
  const stderr = new Response(child.stderr).text();
  try {
    const { text: out, rest } = await readUntil(child.stdout, (t) => t.includes("Ctrl+C to stop."), 15_000);
    const url = /sandbox at (https:\S+)/.exec(out)?.[1];
    const kubeconfig = /kubectl --kubeconfig (\S+)/.exec(out)?.[1];
    expect({ url, kubeconfig, out }).toMatchObject({ url: expect.any(String), kubeconfig: expect.any(String) });

    expect(statSync(kubeconfig!).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(kubeconfig!)).mode & 0o077).toBe(0); // nobody else may even list it
    const config = parse(readFileSync(kubeconfig!, "utf8"));
    const token: string = config.users[0].user.token;
    const tls = { ca: Buffer.from(config.clusters[0].cluster["certificate-authority-data"], "base64").toString() };
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/); // 256 random bits

    const unauthorized = { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message: "Unauthorized", reason: "Unauthorized", code: 401 };
    const attempts: Record<string, string>[] = [{}, { authorization: "Bearer wrong" }, { authorization: `Bearer ${token}x` }, { authorization: token }];
    for (const headers of attempts) {
      for (const path of ["/api/v1/namespaces", "/version", "/apis"]) {
        const res = await fetch(url + path, { headers, tls });
        expect({ path, headers, status: res.status, body: await res.json() }).toEqual({ path, headers, status: 401, body: unauthorized });
      }
    }
    const ok = await fetch(`${url}/api/v1/namespaces`, { headers: { authorization: `Bearer ${token}` }, tls });
    expect(ok.status).toBe(200);

    if (Bun.which("kubectl")) {
      const kubectl = Bun.spawnSync(["kubectl", "--kubeconfig", kubeconfig!, "get", "namespaces", "-o", "name"], { env: { PATH: process.env.PATH ?? "", HOME: "/nonexistent" }, timeout: 15_000 });
      expect({ code: kubectl.exitCode, err: kubectl.stderr.toString() }).toEqual({ code: 0, err: "" });
      expect(kubectl.stdout.toString()).toContain("namespace/default");
    }

    child.kill("SIGINT");
    expect(await child.exited).toBe(0);
    const all = out + (await rest) + (await stderr);
    expect(all).not.toContain(token);
  } finally {
    child.kill("SIGKILL");
  }
}, 30_000);
