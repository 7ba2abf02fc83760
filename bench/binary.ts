// The one binary in figures: its size against the Bun runtime's own size, exec → first LIST
// request against the sandbox, and idle RSS with the example operator watching.
// Baselines: the `bun` executable's size; a compiled hello-world's start-up, built in this run;
// what the binary is made of (binary-parts.ts: the libraries' share, measured by stubbing each).

import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSandbox } from "@kobun/sandbox";
import { ensureBinary, installExampleCRD, median, report, round } from "./common.ts";
import { binaryParts } from "./binary-parts.ts";

const RUNS = Number(process.env.KOBUN_BENCH_RUNS ?? 5);

function rssKiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
}
function hwmKiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
}

export async function benchBinary(): Promise<void> {
  const binary = ensureBinary();
  const work = mkdtempSync(join(tmpdir(), "kobun-bench-"));
  const hello = join(work, "hello");
  writeFileSync(join(work, "hello.ts"), 'console.log("hello");\n');
  const built = await Bun.build({ entrypoints: [join(work, "hello.ts")], minify: true, compile: { outfile: hello } });
  if (!built.success) throw new Error("bench: building hello-world failed");

  const sandbox = await startSandbox();
  try {
    await installExampleCRD(sandbox);
    const helloStart: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const t = performance.now();
      await Bun.spawn([hello], { stdout: "ignore" }).exited;
      helloStart.push(performance.now() - t);
    }
    const firstList: number[] = [];
    let idleRss = 0;
    let peakRss = 0;
    for (let i = 0; i < RUNS; i++) {
      sandbox.stats.reset();
      // The first LIST, or the streaming-list WATCH that replaces it where the server supports it.
      const listed = sandbox.waitFor((r) => (r.verb === "list" || r.verb === "watch") && r.path.includes("kobunexamples"), 20_000);
      const t = performance.now();
      const child = Bun.spawn([binary, "run", "--kubeconfig", sandbox.kubeconfigPath, "--standalone", "-A", "-q"], {
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp" }, stdout: "ignore", stderr: "ignore",
      });
      await listed;
      firstList.push(performance.now() - t);
      if (i === RUNS - 1) {
        await Bun.sleep(500); // idle RSS is a reading after start-up settles, not a synchronisation
        idleRss = rssKiB(child.pid);
        peakRss = hwmKiB(child.pid);
      }
      child.kill("SIGTERM");
      await child.exited;
    }
    // Peak memory while handling 1,000 pre-existing objects (DESIGN.md target: ≤ 40 MB).
    const OBJECTS = 1000;
    for (let i = 0; i < OBJECTS; i += 100) {
      await Promise.all(Array.from({ length: 100 }, (_, j) =>
        fetch(`${sandbox.url}/apis/kobun.dev/v1/namespaces/default/kobunexamples`, {
          method: "POST", headers: { "content-type": "application/json" },
          body: JSON.stringify({ apiVersion: "kobun.dev/v1", kind: "KobunExample", metadata: { name: `mem-${i + j}` }, spec: { size: 1 } }),
        })));
    }
    const handledAll = () => sandbox.store.objects("kobun.dev", "kobunexamples", "default").filter((o) => o.status?.create_fn).length >= OBJECTS;
    const t1000 = performance.now();
    const loaded = Bun.spawn([binary, "run", "--kubeconfig", sandbox.kubeconfigPath, "--standalone", "-A", "-q"], {
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp" }, stdout: "ignore", stderr: "ignore",
    });
    while (!handledAll()) {
      if (performance.now() - t1000 > 60_000) throw new Error("bench: 1,000 objects not handled within 60 s");
      await Bun.sleep(5);
    }
    const handled1000Ms = performance.now() - t1000;
    const peak1000 = hwmKiB(loaded.pid);
    loaded.kill("SIGTERM");
    await loaded.exited;

    const size = statSync(binary).size;
    const runtime = statSync(process.execPath).size;
    const parts = await binaryParts();
    report("binary", {
      binaryMiB: round(size / 1048576),
      bunRuntimeMiB: round(runtime / 1048576),
      overRuntimeMiB: round((size - runtime) / 1048576),
      helloWorldMiB: round(statSync(hello).size / 1048576),
      // What the binary holds over a compiled hello-world: bytecode, each library, kobun's own.
      parts,
      overRuntimeLessLibrariesMiB: round((size - runtime) / 1048576 - Object.values(parts.librariesMiB).reduce((a, b) => a + b, 0)),
      execToFirstListMs: round(median(firstList)),
      helloWorldStartExitMs: round(median(helloStart)),
      ratioToHelloWorld: round(median(firstList) / median(helloStart)),
      idleRssMiB: round(idleRss / 1024),
      peakRssMiB: round(peakRss / 1024),
      objectsHandled: OBJECTS,
      execToAllHandledMs: round(handled1000Ms),
      peakRssWith1000ObjectsMiB: round(peak1000 / 1024),
      targets: { execToFirstListMs: 20, overRuntimeMiB: 5, peakRssWith1000ObjectsMiB: 40 },
    });
  } finally {
    await sandbox.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.main) await benchBinary();
