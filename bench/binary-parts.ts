// What the one binary is made of, in bytes over a compiled hello-world, each build made the way
// build.ts makes the binary (BUNDLE_OPTIONS): the binary again with one library replaced by a
// stub of the same exports (so what it costs is the library as kobun imports and bundles it,
// with its dependencies and its bytecode), and the binary without bytecode. A library alone beside
// a hello-world is no measure: any module with bytecode costs a fixed ~1 MiB more there.
// kobun's own share is the rest: binary − hello-world − the libraries. The binary is built as
// `kobun build` builds it, without the sandbox (protobufjs is the sandbox's alone); what
// `--with-sandbox` adds is measured apart.
// DESIGN's target: binary ≤ runtime + 5 MB + what each chosen library costs, measured.

import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUNDLE_OPTIONS, bundlePlugins, entrySource, findHandlerFiles, KOBUN_ROOT } from "../src/cli/project/build.ts";
import { round } from "./common.ts";

/** The libraries in the binary, by the specifiers src/ imports them with. */
const LIBRARIES: Record<string, string[]> = {
  yaml: ["yaml"],
  opentelemetry: ["@opentelemetry/api", "@opentelemetry/sdk-trace", "@opentelemetry/resources", "@opentelemetry/exporter-trace-otlp-http"],
};

/** A bundler plugin that replaces the modules `specifiers` name with stubs exporting the same names. */
async function stubbing(specifiers: string[]): Promise<Bun.BunPlugin> {
  const stubs = new Map<string, string>();
  for (const specifier of specifiers) {
    const names = Object.keys(await import(Bun.resolveSync(specifier, KOBUN_ROOT))).filter((n) => n !== "default");
    stubs.set(specifier, [...names.map((n) => `export const ${n} = undefined;`), "export default {};"].join("\n"));
  }
  const filter = new RegExp(`^(${specifiers.map((s) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")).join("|")})$`);
  return {
    name: "stub-library",
    setup(build) {
      build.onResolve({ filter }, (args) => ({ path: args.path, namespace: "stub" }));
      build.onLoad({ filter: /.*/, namespace: "stub" }, (args) => ({ contents: stubs.get(args.path)!, loader: "js" }));
    },
  };
}

async function compiledSize(work: string, name: string, source: string, options: { bytecode?: boolean; plugins?: Bun.BunPlugin[] } = {}): Promise<number> {
  const entry = join(work, `${name}.ts`);
  const outfile = join(work, `${name}.bin`);
  writeFileSync(entry, source);
  const built = await Bun.build({
    entrypoints: [entry], ...BUNDLE_OPTIONS, bytecode: options.bytecode ?? BUNDLE_OPTIONS.bytecode, plugins: [...bundlePlugins(false), ...(options.plugins ?? [])],
    compile: { outfile, autoloadDotenv: false, autoloadBunfig: false },
  });
  if (!built.success) throw new Error(`bench: compiling ${name} failed: ${built.logs.join("; ")}`);
  return statSync(outfile).size;
}

/** The binary as `kobun build --with-sandbox` makes it. */
async function sandboxedSize(work: string, modules: string[], manifests: string[]): Promise<number> {
  const entry = join(work, "kobun-with-sandbox.ts");
  const outfile = join(work, "kobun-with-sandbox.bin");
  writeFileSync(entry, entrySource(KOBUN_ROOT, modules, manifests, true));
  const built = await Bun.build({ entrypoints: [entry], ...BUNDLE_OPTIONS, plugins: bundlePlugins(true), compile: { outfile, autoloadDotenv: false, autoloadBunfig: false } });
  if (!built.success) throw new Error(`bench: compiling the binary with the sandbox failed: ${built.logs.join("; ")}`);
  return statSync(outfile).size;
}

export interface BinaryParts {
  helloWorldMiB: number;
  overHelloWorldMiB: number;
  bytecodeMiB: number;
  librariesMiB: Record<string, number>;
  kobunOwnMiB: number;
  /** What `kobun build --with-sandbox` adds (the sandbox, protobufjs and its OpenAPI documents). */
  sandboxMiB: number;
}

/** The parts of the example operator's binary (the checkout's handlers/), in MiB. */
export async function binaryParts(): Promise<BinaryParts> {
  const work = mkdtempSync(join(tmpdir(), "kobun-bench-parts-"));
  try {
    const hello = await compiledSize(work, "hello", 'console.log("hello");\n');
    const { modules, manifests } = findHandlerFiles(join(KOBUN_ROOT, "handlers"));
    const operator = entrySource(KOBUN_ROOT, modules, manifests);
    const binary = await compiledSize(work, "kobun", operator);
    const withoutBytecode = await compiledSize(work, "kobun-source-only", operator, { bytecode: false });
    const librariesMiB: Record<string, number> = {};
    let libraries = 0;
    for (const [name, specifiers] of Object.entries(LIBRARIES)) {
      const bytes = binary - (await compiledSize(work, `without-${name.replace(/\W/g, "-")}`, operator, { plugins: [await stubbing(specifiers)] }));
      libraries += bytes;
      librariesMiB[name] = round(bytes / 1048576);
    }
    return {
      helloWorldMiB: round(hello / 1048576),
      overHelloWorldMiB: round((binary - hello) / 1048576),
      bytecodeMiB: round((binary - withoutBytecode) / 1048576),
      librariesMiB,
      kobunOwnMiB: round((binary - hello - libraries) / 1048576),
      sandboxMiB: round((await sandboxedSize(work, modules, manifests) - binary) / 1048576),
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.main) console.log(JSON.stringify(await binaryParts()));
