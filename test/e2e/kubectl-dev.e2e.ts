// `kobun dev` as a newcomer meets it (`npm start`): the banner's kubectl command and the README's "Poke at it
// with kubectl" commands, run by the real kubectl against the running dev sandbox (HTTPS and a
// token, as `kobun dev` serves it). The sandbox is the dev command's own, so this runs on the
// sandbox target only (on the cluster target it is skipped: there is nothing to compare).

import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { eventually } from "./harness/kube.ts";
import { KUBECTL } from "./harness/kubectl.ts";
import { Operator, ROOT } from "./harness/operator.ts";
import { selectedTargets } from "./harness/target.ts";

/** the shell lines of the README's "Poke at it with kubectl" block, without the `KC=` line */
function readmeCommands(): string[] {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const section = readme.split("### Poke at it with kubectl")[1] ?? "";
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? "";
  return block.split("\n").filter((l) => l.trim() && !l.startsWith("KC="));
}

async function sh(line: string, kubeconfig: string, home: string): Promise<{ code: number; out: string }> {
  const p = Bun.spawn(["sh", "-c", line], {
    cwd: home, env: { PATH: `${dirname(KUBECTL)}:${process.env.PATH ?? "/usr/bin:/bin"}`, HOME: home, KC: kubeconfig }, stdin: "ignore", stdout: "pipe", stderr: "pipe",
  });
  const [out, err] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
  return { code: await p.exited, out: out + err };
}

describe.each(selectedTargets())("kobun dev and kubectl (%s)", (targetName) => {
  let dev: Operator | undefined;
  afterAll(async () => { await dev?.stop("SIGINT").catch(() => {}); });

  test.skipIf(targetName !== "sandbox")("the banner's `kubectl get all -A` and the README's three commands work", async () => {
    const commands = readmeCommands();
    expect(commands).toHaveLength(3);
    // As `npm start` runs it, from the sources: a compiled operator carries no sandbox unless
    // built with --with-sandbox (the binary's refusal is test/cli/project/build-sandbox.test.ts's).
    dev = new Operator("dev", process.execPath, [join(ROOT, "src/cli.ts"), "dev", "--demo", join(ROOT, "handlers")]);
    const banner = await dev.waitForLog(/kubectl --kubeconfig (\S+) get all -A/, 30_000);
    const kubeconfig = /kubectl --kubeconfig (\S+) get all -A/.exec(banner)![1]!;
    await dev.waitForLog(/demo: deleted/, 30_000);
    const home = dirname(kubeconfig);
    const all = await sh(`kubectl --kubeconfig "$KC" get all -A`, kubeconfig, home);
    expect(all).toEqual({ code: 0, out: "No resources found\n" });
    const events = await sh(commands[0]!, kubeconfig, home);
    expect(events.code).toBe(0);
    expect(events.out).toMatch(/^NAMESPACE +LAST SEEN +TYPE +REASON +OBJECT +MESSAGE\n/);
    expect(events.out).toMatch(/kobunexample\/kobun-demo +Handler 'create_fn' succeeded\./);
    expect(await sh(commands[1]!, kubeconfig, home)).toEqual({ code: 0, out: "kobunexample.kobun.dev/hello created\n" });
    // the operator greets the new object a moment later
    await eventually("the greeting", async () => (await sh(commands[2]!, kubeconfig, home)).out === "hello hello\n", { timeoutMs: 15_000, intervalMs: 200 });
    const { code } = await dev.stop("SIGINT");
    expect(code).toBe(0);
  }, 90_000);
});
