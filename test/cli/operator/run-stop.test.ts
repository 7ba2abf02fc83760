// A SIGTERM that arrives before the operator started (it still retries the API server, say: a
// pod deleted while the cluster is unreachable) is a clean stop, exit 0 (README: "Exit codes"),
// not "kobun: crashed: received SIGTERM" and exit 1.

import { expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stoppedEarly } from "../../../src/cli/operator/signals.ts";

const repo = join(import.meta.dir, "../../..");

test("SIGTERM while kobun run still retries an unreachable API server: exit 0, nothing said to have crashed", async () => {
  const dir = mkdtempSync(join(tmpdir(), "kobun-run-stop-"));
  writeFileSync(join(dir, "closed.kubeconfig"), JSON.stringify({
    apiVersion: "v1", kind: "Config", "current-context": "c", clusters: [{ name: "c", cluster: { server: "http://127.0.0.1:1" } }],
    users: [{ name: "u", user: {} }], contexts: [{ name: "c", context: { cluster: "c", user: "u" } }],
  }));
  const child = Bun.spawn([process.execPath, join(repo, "src/cli.ts"), "run", join(repo, "handlers", "example.ts"), "--kubeconfig", join(dir, "closed.kubeconfig"), "-v"], {
    cwd: repo, env: { PATH: process.env.PATH ?? "", HOME: "/nonexistent" }, stdout: "pipe", stderr: "pipe",
  });
  const killer = setTimeout(() => child.kill("SIGKILL"), 20_000);
  try {
    const decoder = new TextDecoder();
    let err = "";
    const reader = child.stderr.getReader();
    while (!err.includes("retrying request")) {
      const { value, done } = await reader.read();
      if (done) break;
      err += decoder.decode(value, { stream: true });
    }
    expect(err).toContain("retrying request method=GET path=/version");
    child.kill("SIGTERM");
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      err += decoder.decode(value, { stream: true });
    }
    expect(await child.exited).toBe(0);
    expect(err).not.toContain("crashed");
  } finally {
    clearTimeout(killer);
    child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
}, 30_000);

test("stoppedEarly: only the stop's own abort, once stopped, counts as a clean stop (kobun run and kobun dev share it)", () => {
  const stop = new AbortController();
  const early = new DOMException("received SIGTERM", "AbortError");
  expect(stoppedEarly(stop, early)).toBe(false);            // not stopped yet: a real failure
  stop.abort(early);
  expect(stoppedEarly(stop, early)).toBe(true);
  expect(stoppedEarly(stop, Object.assign(new Error("fetch aborted"), { name: "AbortError" }))).toBe(true);
  expect(stoppedEarly(stop, new Error("ECONNREFUSED"))).toBe(false); // another error while stopping is still reported
});
