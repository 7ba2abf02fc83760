// cli/project/: the tools for an author's project (init, build, test, generate types). init,
// build and test need the kobun package and Bun itself (cli.ts refuses them in a compiled
// operator); generate only reads CRDs, so a compiled operator runs it too. Nothing of
// cli/operator/ or cli/manifests/ may import them (test/contracts/rooms.ts, FORBIDDEN); the
// compiled entry names cli/operator/loading.ts by path, not by import.

// `kobun build`: compile the kobun runtime plus every handler module of a project into ONE
// executable (what build.ts at the repository's root does for kobun's own handlers/).
//
//   kobun build [--handlers DIR] [--outfile PATH] [--target bun-linux-x64|bun-linux-arm64|...]
//
// Handler modules (*.ts, *.js under the handlers directory, tests excluded) are imported by a
// generated entry module so they register themselves; *.yaml files there (CRDs) are embedded
// as text so `kobun dev` can install them into the sandbox and `kobun manifests` can print them.
// It runs Bun.build, so it needs the package (or a checkout), never a compiled binary.

import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, join, relative, resolve } from "node:path";
import { tmpdir } from "node:os";
import { UsageError } from "../../config/index.ts";
import { ExitCode, FatalError } from "../../runtime/exits.ts";
import { readFlags, stringFlag } from "../args.ts";

export const BUILD_HELP = `Usage: kobun build [--handlers DIR] [--outfile PATH] [--target TARGET] [--with-sandbox]
                   [--no-start-check]
Compiles the kobun runtime and the handlers (default ./handlers) into one executable
(default dist/kobun). --target: another platform, as bun build --compile --target takes it:
bun-linux-x64, bun-linux-arm64, bun-linux-x64-musl, bun-darwin-arm64, bun-windows-x64, ...
--with-sandbox: carry the sandbox API server too, so the binary's own \`dev\` command works
(without it, \`kobun dev\` runs from the project: npx kobun dev).
Built for this machine, the binary is started once (\`version\`, which loads the handlers): one that
cannot start fails the build. --no-start-check: skip that (handler modules that need, as they
load, what only their Pod has: an environment variable, a mounted file).`;

/** The kobun package (or checkout) this file belongs to: its src/cli.ts goes into the binary. */
export const KOBUN_ROOT = resolve(import.meta.dir, "../../..");

// What `bun build --compile --target` accepts: bun-<os>-<arch>[-baseline|-modern][-glibc|-musl].
const TARGET = /^bun(-(linux|darwin|windows|freebsd))(-(x64|arm64|aarch64))(-(baseline|modern))?(-(glibc|musl))?$/;

export interface BuildOptions {
  handlers: string;
  outfile: string;
  target?: string;
  /** Carry the sandbox (for the binary's own `dev` command); a production binary leaves it out. */
  withSandbox?: boolean;
  /** Where relative paths and the project's tsconfig.json are found. */
  cwd: string;
  /** false: the binary built for this machine is not started once to see that its handlers load. */
  startCheck?: boolean;
}

export function parseBuildFlags(argv: string[], cwd: string): BuildOptions {
  const { values, positionals } = readFlags(argv, {
    handlers: { value: true }, outfile: { short: "o", value: true }, target: { value: true },
    "with-sandbox": { value: false }, "no-start-check": { value: false },
  });
  if (positionals.length > 0) {
    const got = JSON.stringify(positionals[0]);
    throw new UsageError(`kobun build takes no arguments, got ${got} (use --handlers DIR)`);
  }
  const target = stringFlag(values, "target");
  if (target !== undefined && !TARGET.test(target)) {
    throw new UsageError(
      `--target ${JSON.stringify(target)} is not a bun compile target; ` +
        "e.g. bun-linux-x64, bun-linux-arm64, bun-darwin-arm64, bun-windows-x64",
      "--target",
    );
  }
  const withSandbox = values["with-sandbox"] === true;
  return {
    handlers: stringFlag(values, "handlers") ?? "handlers", outfile: stringFlag(values, "outfile") ?? "dist/kobun", cwd,
    ...(target ? { target } : {}), ...(withSandbox ? { withSandbox } : {}),
    ...(values["no-start-check"] === true ? { startCheck: false } : {}),
  };
}

/** Every handler module and manifest under `dir`, sorted so builds are reproducible. */
export function findHandlerFiles(dir: string): { modules: string[]; manifests: string[] } {
  const modules: string[] = [];
  const manifests: string[] = [];
  const walk = (current: string) => {
    for (const name of readdirSync(current).sort()) {
      const path = join(current, name);
      if (statSync(path).isDirectory()) {
        if (name !== "node_modules" && !name.startsWith(".")) walk(path);
      } else if (/\.(ts|js|mjs)$/.test(name) && !/\.(test|spec|d)\.[mt]?[jt]s$/.test(name)) modules.push(path);
      else if (/\.ya?ml$/.test(name)) manifests.push(path);
    }
  };
  walk(dir);
  return { modules, manifests };
}

/**
 * The generated entry: handler modules imported one after another, each with `import()` as `kobun run`
 * imports them from source (a failure while loading them reported as the CLI reports failures), embedded
 * manifests, then the CLI.
 *
 * `import()`, not a static import: the bundler hoists every statically imported module into one scope and
 * renames a top-level name met twice (two modules' `function reconcile`, a handler called `main` beside the
 * CLI's) to `reconcile2`, `main2`; a handler's default id is its function's name, so it would differ from
 * `kobun dev`'s. A module imported with `import()` is a chunk of its own, whose names are its own
 * (test/cli/project/build-chunks.test.ts).
 */
export function entrySource(root: string, modules: string[], manifests: string[], withSandbox = false): string {
  const lines = [
    `import { main } from ${JSON.stringify(join(root, "src/cli.ts"))};`,
    `import { loadHandlerModules } from ${JSON.stringify(join(root, "src/cli/operator/loading.ts"))};`,
  ];
  manifests.forEach((m, i) => lines.push(`import manifest${i} from ${JSON.stringify(m)} with { type: "text" };`));
  const imports = modules.map((m) => `() => import(${JSON.stringify(m)})`).join(", ");
  lines.push(`await loadHandlerModules([${imports}]);`);
  const list = manifests.map((m, i) => `{ name: ${JSON.stringify(basename(m))}, text: manifest${i} }`).join(", ");
  const sandbox = withSandbox ? "" : ", sandbox: false";
  lines.push(`await main(process.argv.slice(2), { handlersLoaded: true, manifests: [${list}]${sandbox} });`);
  return lines.join("\n") + "\n";
}

/** The project's own tsconfig (its paths, its jsx) when it has one, else the checkout's. */
function tsconfigFor(cwd: string): string | undefined {
  return [join(cwd, "tsconfig.json"), join(KOBUN_ROOT, "tsconfig.json")].find((path) => existsSync(path));
}

/**
 * How the one binary is bundled (bench/binary.ts builds its baselines the same way).
 * Identifiers are not minified: a handler's default id is its function name, which must be the
 * same in the binary as under `kobun dev` and `kobun test`, or results and progress would be
 * stored elsewhere (two handlers both renamed "e" do not even register). Bun 1.4.5's `keepNames`
 * keeps no name (oven-sh/bun#25332; test/cli/project/build-names.test.ts). Measured on an
 * operator of one reconcile: +0.45 MiB of binary, idle RSS unchanged (24 MB either way).
 */
export const BUNDLE_OPTIONS = {
  minify: { whitespace: true, syntax: true, identifiers: false, keepNames: true },
  sourcemap: "none",
  target: "bun",
  format: "esm",
  // Precompiled bytecode: start-up (exec → first LIST) is dominated by parsing and compiling our
  // modules; shipping bytecode removes most of that cost. It is most of the binary's own size
  // (bench/binary.ts: +5.2 of its +6.4 MiB over a compiled hello-world).
  bytecode: true,
  // Each dynamically imported command (dev and its sandbox, manifests, typegen, webhooks,
  // sharding, OTel...) becomes its own chunk inside the executable, loaded only when used:
  // one bundle made `run` carry them all (their source and bytecode, and the lazy-init
  // wrappers whose calls the JIT compiled at start). Idle RSS: 49.7 → 46.5 MB (bench/idle.ts).
  splitting: true,
} as const satisfies Partial<Bun.BuildConfig>;

/**
 * Leaves the sandbox (the @kobun/sandbox package, protobufjs and its vendored OpenAPI documents)
 * out of a production binary: its one importer there, runtime/dev.ts, gets a module of the same
 * face that refuses. The entry's `sandbox: false` makes `dev` say so before it is reached (issue 31).
 */
export const WITHOUT_SANDBOX: Bun.BunPlugin = {
  name: "kobun-without-sandbox",
  setup(builder) {
    builder.onResolve({ filter: /^@kobun\/sandbox$/ }, (args) =>
      args.importer.startsWith(join(KOBUN_ROOT, "src"))
        ? { path: "sandbox", namespace: "kobun-without-sandbox" }
        : undefined);
    builder.onLoad({ filter: /.*/, namespace: "kobun-without-sandbox" }, () => ({
      loader: "js",
      contents:
        "export function startSandbox() { " +
        'throw new Error("this binary was built without the sandbox (kobun build --with-sandbox carries it)"); }\n',
    }));
  },
};

/**
 * The bundler's plugins for a binary with or without the sandbox (bench/binary-parts.ts builds the
 * same).
 */
export function bundlePlugins(withSandbox: boolean): Bun.BunPlugin[] {
  return withSandbox ? [] : [WITHOUT_SANDBOX];
}

/** What a build made: the binary, its size, what it carries, and how long it took. */
export interface Built {
  outfile: string;
  bytes: number;
  modules: number;
  manifests: number;
  ms: number;
}

export async function build(options: BuildOptions): Promise<Built> {
  const handlersDir = resolve(options.cwd, options.handlers);
  if (!existsSync(handlersDir) || !statSync(handlersDir).isDirectory()) {
    throw new UsageError(`--handlers ${options.handlers}: no such directory in ${options.cwd}`, "--handlers");
  }
  const { modules, manifests } = findHandlerFiles(handlersDir);
  if (modules.length === 0) {
    console.warn(`kobun build: no handler modules in ${relative(options.cwd, handlersDir) || "."}`);
  }
  const outfile = resolve(options.cwd, options.outfile);
  const work = mkdtempSync(join(tmpdir(), "kobun-build-"));
  const entry = join(work, "entry.ts");
  writeFileSync(entry, entrySource(KOBUN_ROOT, modules, manifests, options.withSandbox === true));
  mkdirSync(resolve(outfile, ".."), { recursive: true });
  const started = performance.now();
  try {
    const tsconfig = tsconfigFor(options.cwd);
    const result = await Bun.build({
      entrypoints: [entry],
      ...(tsconfig ? { tsconfig } : {}),
      ...BUNDLE_OPTIONS,
      plugins: bundlePlugins(options.withSandbox === true),
      define: { "process.env.KOBUN_BUILD_TIME": JSON.stringify(new Date().toISOString()) },
      compile: {
        ...(options.target ? { target: options.target as Bun.Build.CompileTarget } : {}),
        outfile,
        // The binary must behave the same wherever it lands: never pick up a stray
        // .env or bunfig.toml from the directory it is started in.
        autoloadDotenv: false,
        autoloadBunfig: false,
      },
    });
    if (!result.success) {
      for (const log of result.logs) console.error(log);
      throw new FatalError("crash", "kobun build: bundling failed (the errors are above)");
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const ms = Math.round(performance.now() - started);
  // Another platform's binary cannot run here; this one is started once, as a Pod would.
  if (!options.target && options.startCheck !== false) await expectStarts(outfile, options.cwd);
  return { outfile, bytes: statSync(outfile).size, modules: modules.length, manifests: manifests.length, ms };
}

/**
 * Runs the new binary's `version`, which loads and registers every handler module as any command does:
 * a module that throws or a registration the operator refuses would otherwise be found only at the
 * first start, in a Pod. It fails the build with the binary's own exit code and error, and removes it.
 */
async function expectStarts(outfile: string, cwd: string): Promise<void> {
  const env: Record<string, string | undefined> = { ...process.env };
  delete env.KUBECONFIG; // `version` connects nowhere; nothing here may find a cluster
  const child = Bun.spawn([outfile, "version"], { cwd, env, stdin: "ignore", stdout: "ignore", stderr: "pipe" });
  let hung = false;
  const killer = setTimeout(() => ((hung = true), child.kill("SIGKILL")), 60_000);
  const [stderr, code] = await Promise.all([new Response(child.stderr).text(), child.exited]);
  clearTimeout(killer);
  if (code === 0) return;
  rmSync(outfile, { force: true });
  const kind = code === ExitCode.config ? "config" : "crash";
  const shown = relative(cwd, outfile) || outfile;
  // A module that waits on something as it loads (a connection, a file that never comes) never lets it end.
  const how = hung ? "did not end within 60 s (a handler module waits as it loads?)" : `exited ${code}`;
  throw new FatalError(kind, `kobun build: the built operator does not start (\`${shown} version\` ${how}), ` +
    `so it was removed (--no-start-check skips this):\n${stderr.trimEnd()}`);
}

export async function buildCommand(argv: string[], cwd = process.cwd()): Promise<number> {
  const built = await build(parseBuildFlags(argv, cwd));
  console.log(
    `built ${relative(cwd, built.outfile)}: ${(built.bytes / 1048576).toFixed(1)} MiB, ` +
      `${built.modules} handler module(s), ${built.manifests} manifest(s), in ${built.ms} ms`,
  );
  return ExitCode.ok;
}
