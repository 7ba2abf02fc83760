// The operators bench/real.ts runs side by side, and how each is built or installed: kobun's
// binary, the bare-client floor (compiled here like kobun), Kopf from PyPI in a cached virtual
// environment, and a controller-runtime operator built from the Go module proxy, cached.
// A peer that cannot be had on this machine is returned as `unavailable` with the reason.

import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { operatorRoot } from "../common.ts";

export const KOPF_VERSION = "1.45.2";
export const CONTROLLER_RUNTIME_VERSION = "v0.25.2";

/** What a peer needs of the API server: a kubeconfig, or the parts of it the floor reads. */
export interface Target { kubeconfigPath: string; url: string; caPath: string; tokenPath: string }

export interface Peer {
  name: "kobun" | "kobunHttp1" | "floor" | "floorSameRequests" | "floorSameRequestsHttp1" | "kopf" | "controllerRuntime";
  /** The command that handles every object of `namespace`, then runs until SIGTERM. */
  command(target: Target, namespace: string): string[];
  /** The environment: never the machine's own kubeconfig (HOME points nowhere useful). */
  env(target: Target): Record<string, string>;
}

export type Prepared = Peer | { name: Peer["name"]; unavailable: string };

const here = import.meta.dir;
const cache = join(process.env.KOBUN_BENCH_CACHE ?? join(homedir(), ".cache", "kobun"));
export const bareEnv = (home: string) => ({ PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, LANG: "C.UTF-8" });

/**
 * kobun compiled by build.ts with handlers/example.ts alone (bench/peers/handlers), fresh each
 * run; by the checkout KOBUN_BENCH_OPERATOR_ROOT names when set (common.ts), for A/B runs.
 */
export function kobunBenchBinary(handlers = "bench/peers/handlers", outfile = "dist/kobun-bench"): string {
  const binary = join(operatorRoot, outfile);
  const built = Bun.spawnSync([process.execPath, "run", join(operatorRoot, "build.ts"), "--handlers", join(operatorRoot, handlers), "--outfile", binary], {
    cwd: operatorRoot, stdout: "ignore", stderr: "inherit",
  });
  if (built.exitCode !== 0) throw new Error(`bench: building ${outfile} failed`);
  return binary;
}

/**
 * kobun over `protocol`; "kobunHttp1" is kobun with --http1 beside it (bench/real.ts); `binary`:
 * another operator than the example's (bench/reconcile.ts).
 * KOBUN_BENCH_PROFILE_DIR: each run writes Bun's CPU profile (markdown) there.
 * KOBUN_BENCH_KOBUN_ENV: NAME=VALUE pairs (space-separated) added to its environment, e.g.
 * `BUN_JSC_useFTLJIT=0` to measure it with JavaScriptCore's FTL tier off (README: Running in production).
 */
export function kobunPeer(home: string, protocol: Protocol = "http2", name: "kobun" | "kobunHttp1" = "kobun", binary = kobunBenchBinary()): Peer {
  const profiles = process.env.KOBUN_BENCH_PROFILE_DIR;
  const profiling: Record<string, string> = profiles ? { BUN_OPTIONS: `--cpu-prof-md --cpu-prof-dir=${profiles}` } : {};
  return {
    name, env: () => ({ ...bareEnv(home), ...profiling, ...extraKobunEnv() }),
    command: (t, ns) => [binary, "run", "--kubeconfig", t.kubeconfigPath, "-n", ns, "--standalone", "-q", ...(protocol === "http1.1" ? ["--http1"] : [])],
  };
}

function extraKobunEnv(): Record<string, string> {
  const pairs = (process.env.KOBUN_BENCH_KOBUN_ENV ?? "").split(" ").filter(Boolean);
  return Object.fromEntries(pairs.map((pair) => {
    const at = pair.indexOf("=");
    if (at < 1) throw new Error(`KOBUN_BENCH_KOBUN_ENV: NAME=VALUE pairs, got "${pair}"`);
    return [pair.slice(0, at), pair.slice(at + 1)];
  }));
}

/** HTTP/2 or HTTP/1.1 to the API server (kobun's `--http1` / the floor's `--protocol`). */
export type Protocol = "http2" | "http1.1";

/**
 * The bare-client floor, compiled with the options build.ts uses for kobun; `sameRequests`:
 * every request kobun makes, the watch and the Events too (floor.ts); over `protocol`.
 */
export async function floorPeer(work: string, home: string, name: "floor" | "floorSameRequests" | "floorSameRequestsHttp1", protocol: Protocol): Promise<Prepared> {
  const sameRequests = name !== "floor";
  const outfile = join(work, "floor");
  const built = await Bun.build({
    entrypoints: [join(here, "floor.ts")], target: "bun", format: "esm", bytecode: true, sourcemap: "none",
    minify: { whitespace: true, syntax: true, identifiers: true, keepNames: true },
    compile: { outfile, autoloadDotenv: false, autoloadBunfig: false },
  });
  if (!built.success) return { name, unavailable: `compiling bench/peers/floor.ts failed: ${built.logs.join("; ")}` };
  return {
    name, env: () => bareEnv(home),
    command: (t, ns) => [outfile, "--server", t.url, "--ca", t.caPath, "--token-file", t.tokenPath, "--namespace", ns, "--protocol", protocol, ...(sameRequests ? ["--same-requests"] : [])],
  };
}

function run(cmd: string[], what: string): string | undefined {
  const done = Bun.spawnSync(cmd, { stdout: "pipe", stderr: "pipe" });
  if (done.exitCode === 0) return undefined;
  const tail = (done.stderr.toString() || done.stdout.toString()).trim().split("\n").slice(-3).join(" | ");
  return `${what} failed (exit ${done.exitCode}): ${tail}`;
}

/** Kopf in `<cache>/kopf/<version>`: made once (a marker file says it is complete), then reused. */
export function kopfPeer(home: string): Prepared {
  const venv = join(cache, "kopf", KOPF_VERSION);
  const marker = join(venv, ".installed");
  if (!existsSync(marker)) {
    const python = Bun.which("python3");
    if (!python) return { name: "kopf", unavailable: "python3 is not on PATH" };
    rmSync(venv, { recursive: true, force: true }); // a half-made one from an interrupted run
    mkdirSync(join(cache, "kopf"), { recursive: true });
    console.error(`bench: installing Kopf ${KOPF_VERSION} from PyPI into ${venv}`);
    const failed = run([python, "-m", "venv", venv], "python3 -m venv")
      ?? run([join(venv, "bin", "pip"), "install", "--quiet", "--disable-pip-version-check", `kopf==${KOPF_VERSION}`], `pip install kopf==${KOPF_VERSION}`);
    if (failed) return { name: "kopf", unavailable: failed };
    writeFileSync(marker, `kopf==${KOPF_VERSION}\n`);
  }
  return {
    name: "kopf", env: (t) => ({ ...bareEnv(home), KUBECONFIG: t.kubeconfigPath, PYTHONDONTWRITEBYTECODE: "1" }),
    command: (t, ns) => [join(venv, "bin", "kopf"), "run", "--standalone", "--quiet", "-n", ns, join(here, "kopf_example.py")],
  };
}

/** The controller-runtime operator, built once per version of its sources into the cache. */
export function controllerRuntimePeer(home: string): Prepared {
  const binary = goOperator(".", ["main.go"]);
  if (binary.unavailable) return { name: "controllerRuntime", unavailable: binary.unavailable };
  return {
    name: "controllerRuntime", env: () => bareEnv(home),
    command: (t, ns) => [binary.path, "--kubeconfig", t.kubeconfigPath, "--namespace", ns],
  };
}

/**
 * The Go package `pkg` of bench/peers/controller-runtime (its module), built once per version of
 * go.mod, go.sum, peer/ (what the operators share) and `files` (its sources) into
 * `<cache>/controller-runtime/<version>/<digest>`.
 */
export function goOperator(pkg: string, files: string[]): { path: string; unavailable?: string } {
  const go = Bun.which("go") ?? (existsSync("/usr/local/go/bin/go") ? "/usr/local/go/bin/go" : undefined);
  const source = join(here, "controller-runtime");
  const digest = createHash("sha256");
  for (const file of ["go.mod", "go.sum", "peer/peer.go", ...files.map((f) => join(pkg, f))]) digest.update(readFileSync(join(source, file)));
  const dir = join(cache, "controller-runtime", CONTROLLER_RUNTIME_VERSION, digest.digest("hex").slice(0, 12));
  const binary = join(dir, "operator");
  if (!existsSync(binary)) {
    if (!go) return { path: binary, unavailable: "go is not on PATH" };
    mkdirSync(dir, { recursive: true });
    console.error(`bench: building the controller-runtime ${CONTROLLER_RUNTIME_VERSION} operator ${pkg} into ${dir} (first time: minutes)`);
    const partial = `${binary}.partial`;
    const failed = run(["sh", "-c", `cd '${source}' && CGO_ENABLED=0 '${go}' build -mod=readonly -trimpath -ldflags='-s -w' -o '${partial}' './${pkg}'`], "go build");
    if (failed) return { path: binary, unavailable: failed };
    renameSync(partial, binary);
  }
  return { path: binary };
}
