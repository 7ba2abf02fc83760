// build.ts: compile the kobun runtime plus every handler module into ONE executable.
//
//   bun run build.ts [--handlers DIR] [--outfile PATH] [--target bun-linux-x64|bun-linux-arm64|...]
//
// Handler modules (*.ts, *.js under the handlers directory, tests excluded) are imported by a
// generated entry module so they register themselves; *.yaml files there (CRDs) are embedded
// as text so `kobun dev` can install them into the sandbox and `kobun manifests` can print them.

import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, join, relative, resolve } from "node:path";
import { tmpdir } from "node:os";

interface BuildArgs {
  handlers: string;
  outfile: string;
  target?: string;
}

function parseArgs(argv: string[]): BuildArgs {
  const args: BuildArgs = { handlers: "handlers", outfile: "dist/kobun" };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i]!.split("=", 2) as [string, string | undefined];
    const value = () => inline ?? argv[++i] ?? fail(`${flag} needs a value`);
    if (flag === "--handlers") args.handlers = value();
    else if (flag === "--outfile") args.outfile = value();
    else if (flag === "--target") args.target = value();
    else if (flag === "--help" || flag === "-h") {
      console.log("usage: bun run build.ts [--handlers DIR] [--outfile PATH] [--target bun-linux-x64|bun-linux-arm64|...]");
      process.exit(0);
    } else fail(`unknown option ${flag}`);
  }
  return args;
}

function fail(message: string): never {
  console.error(`build.ts: ${message}`);
  process.exit(2);
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

/** The generated entry: handler imports, embedded manifests, then the CLI. */
export function entrySource(root: string, modules: string[], manifests: string[]): string {
  const lines = [`import { main } from ${JSON.stringify(join(root, "src/cli.ts"))};`];
  modules.forEach((m) => lines.push(`import ${JSON.stringify(m)};`));
  manifests.forEach((m, i) => lines.push(`import manifest${i} from ${JSON.stringify(m)} with { type: "text" };`));
  const list = manifests.map((m, i) => `{ name: ${JSON.stringify(basename(m))}, text: manifest${i} }`).join(", ");
  lines.push(`await main(process.argv.slice(2), { handlersLoaded: true, manifests: [${list}] });`);
  return lines.join("\n") + "\n";
}

async function build(args: BuildArgs): Promise<void> {
  const root = import.meta.dir;
  const handlersDir = resolve(args.handlers);
  const { modules, manifests } = findHandlerFiles(handlersDir);
  if (modules.length === 0) console.warn(`build.ts: no handler modules in ${relative(process.cwd(), handlersDir) || "."}`);

  const work = mkdtempSync(join(tmpdir(), "kobun-build-"));
  const entry = join(work, "entry.ts");
  writeFileSync(entry, entrySource(root, modules, manifests));
  mkdirSync(resolve(args.outfile, ".."), { recursive: true });
  const started = performance.now();
  try {
    const result = await Bun.build({
      entrypoints: [entry],
      tsconfig: join(root, "tsconfig.json"),
      // keepNames: a handler's default id is its function name; it must survive minification,
      // or progress stored by one build would not be found by the next.
      minify: { whitespace: true, syntax: true, identifiers: true, keepNames: true },
      sourcemap: "none",
      // Precompiled bytecode: start-up (exec → first LIST) is dominated by parsing and
      // compiling our modules; shipping bytecode removes most of that cost.
      target: "bun",
      format: "esm",
      bytecode: true,
      define: { "process.env.KOBUN_BUILD_TIME": JSON.stringify(new Date().toISOString()) },
      compile: {
        ...(args.target ? { target: args.target as Bun.Build.CompileTarget } : {}),
        outfile: resolve(args.outfile),
        // The binary must behave the same wherever it lands: never pick up a stray
        // .env or bunfig.toml from the directory it is started in.
        autoloadDotenv: false,
        autoloadBunfig: false,
      },
    });
    if (!result.success) {
      for (const log of result.logs) console.error(log);
      fail("bundling failed");
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const size = statSync(resolve(args.outfile)).size;
  const ms = Math.round(performance.now() - started);
  console.log(
    `built ${relative(process.cwd(), resolve(args.outfile))}: ${(size / 1048576).toFixed(1)} MiB, ` +
      `${modules.length} handler module(s), ${manifests.length} manifest(s), in ${ms} ms`,
  );
}

if (import.meta.main) await build(parseArgs(process.argv.slice(2)));
