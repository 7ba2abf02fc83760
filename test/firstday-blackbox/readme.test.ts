// The README from the top: its first two commands are what package.json's scripts run, and
// "Poke at it with kubectl" works as written against `kobun dev`'s sandbox (with the real
// kubectl when the machine has one: the demo's Events, an apply, the greeting the handler
// writes, awaited with kubectl's own watch).

import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { cli, finish, root, Running, userEnv } from "./helpers.ts";

const readme = readFileSync(join(root, "README.md"), "utf8");

test("`npm start` is `kobun dev --demo`, `npm test` the typecheck and every test (this folder too)", async () => {
  const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)![1]!;
  expect(firstBlock).toContain("npm install && npm start");
  expect(firstBlock).toContain("npm install && npm test");
  const { scripts } = await Bun.file(join(root, "package.json")).json() as { scripts: Record<string, string> };
  expect(scripts.start).toBe("bun src/cli.ts dev --demo");
  expect(scripts.test).toStartWith("bun run typecheck && bun test");
  const bunfig = readFileSync(join(root, "bunfig.toml"), "utf8");
  const ignored = JSON.parse(/^pathIgnorePatterns = (\[.*\])$/m.exec(bunfig)![1]!) as string[];
  expect(ignored.filter((pattern) => new Bun.Glob(pattern).match("test/firstday-blackbox/readme.test.ts"))).toEqual([]);
});

test.skipIf(!Bun.which("kubectl"))("README's kubectl session against `kobun dev`: the demo's Events, an apply, the greeting", async () => {
  const dev = new Running([process.execPath, cli, "dev", "--demo"]);
  try {
    await dev.until(/demo: deleted KobunExample\/kobun-demo/, 30_000);
    const kubeconfig = (await dev.until(/kubectl --kubeconfig (\S+kubeconfig\.yaml)/))[1]!;
    const kubectl = (args: string[], stdin?: string) =>
      finish(["sh", "-c", `${stdin === undefined ? "" : `printf '${stdin}' | `}kubectl --kubeconfig "$KC" ${args.join(" ")}`],
        { env: userEnv({ KC: kubeconfig }), ms: 20_000 });
    const events = await kubectl(["get", "events", "-A"]);
    expect(events.code).toBe(0);
    for (const handler of ["create_fn", "update_fn", "delete_fn"]) expect(events.stdout).toContain(`Handler '${handler}' succeeded.`);
    // The README's printf, as written.
    const manifest = /printf '([^']+)' \| kubectl/.exec(readme)![1]!;
    const applied = await kubectl(["apply", "-f", "-"], manifest);
    expect({ code: applied.code, out: applied.stdout.trim() }).toEqual({ code: 0, out: "kobunexample.kobun.dev/hello created" });
    const waited = await kubectl(["wait", "kobunexample/hello", "--for=jsonpath='{.status.greeting}'='hello hello'", "--timeout=15s"]);
    expect({ code: waited.code, err: waited.stderr }).toEqual({ code: 0, err: "" });
    const greeting = await kubectl(["get", "kobunexample", "hello", "-o", "jsonpath='{.status.greeting}{\"\\n\"}'"]);
    expect(greeting.stdout).toBe("hello hello\n");   // the README's comment
    dev.child.kill("SIGINT");
    expect(await dev.exited()).toBe(0);
  } finally {
    dev.kill();
  }
}, 45_000);
