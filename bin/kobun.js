#!/usr/bin/env node
// The `kobun` command of the npm package. kobun runs on Bun, but `npx kobun` starts whatever the
// bin's shebang names, on a machine that may have only Node and npm: so this launcher is plain
// Node, and runs src/cli.ts with the Bun that npm installed beside kobun (the exact version kobun
// pins), passing the arguments, the signals and the exit status through. npm installs Bun's platform
// package (@oven/bun-<os>-<arch>, an optional dependency of `bun`) beside kobun; its binary is run
// directly, so `bun`'s install script, which only links it into bun/bin/, is not needed.
import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import os from "node:os";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const cli = join(root, "src", "cli.ts");

/**
 * The package-local Bun: a platform package's binary, else the `bun` package's (a project that also
 * depends on `bun`, whose install script moves the platform binary to its own bin/bun.exe).
 */
function findBun() {
  if (process.env.KOBUN_BUN) return process.env.KOBUN_BUN;
  const require = createRequire(join(root, "package.json"));
  const candidates = [];
  const arch = process.arch === "arm64" ? "aarch64" : process.arch;
  for (const flavour of ["", "-baseline", "-musl"]) {
    try {
      candidates.push(join(dirname(require.resolve(`@oven/bun-${process.platform}-${arch}${flavour}/package.json`)), "bin", "bun"));
    } catch {}
  }
  try {
    // The package's bin (bun.exe on every platform), which its install script links to the real binary.
    candidates.push(join(dirname(require.resolve("bun/package.json")), "bin", "bun.exe"));
  } catch {}
  for (const path of candidates) {
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {}
  }
  console.error("kobun: no Bun found beside kobun (Bun's platform packages are among its optional dependencies): run `npm install` again, or set KOBUN_BUN=/path/to/bun");
  process.exit(1);
}

const child = spawn(findBun(), [cli, ...process.argv.slice(2)], { stdio: "inherit" });
// Ctrl+C reaches both processes (one process group): passing it on would be a second SIGINT,
// which kobun takes as "exit at once". SIGTERM and SIGHUP sent to this launcher alone are passed on.
process.on("SIGINT", () => {});
for (const signal of ["SIGTERM", "SIGHUP"]) process.on(signal, () => child.kill(signal));
child.on("error", (error) => {
  console.error(`kobun: cannot start Bun: ${error.message}`);
  process.exit(1);
});
child.on("exit", (code, signal) => process.exit(code ?? 128 + (os.constants.signals[signal] ?? 0)));
