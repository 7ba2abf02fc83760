// `kobun test`: the project's tests, with the Bun that runs kobun (the project's pinned
// devDependency when started through `npx kobun`), in the current directory. It typechecks first
// (`tsc --noEmit -p .` with the project's TypeScript, as kobun's own `npm test` does): Bun runs
// TypeScript without checking it, so a mistyped call would otherwise pass the tests and fail at run
// time. `--no-typecheck` skips that; every other argument goes to `bun test` unchanged (a file
// filter, -t NAME, --timeout MS, ...).

import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { UsageError } from "../../config/index.ts";
import { ExitCode } from "../../runtime/exits.ts";

export const TEST_HELP = `Usage: kobun test [--no-typecheck] [bun test arguments]
Typechecks the project (tsc --noEmit -p . with the project's TypeScript; it stops there on a type
error), then runs "bun test" in the current directory with kobun's Bun: every *.test.ts file, e.g.
the handler tests that use kobun/testing. Arguments (files, -t NAME, --timeout MS) go to bun test.
  --no-typecheck   run the tests without typechecking first`;

const SKIP = "--no-typecheck";

export async function testCommand(argv: string[], cwd = process.cwd()): Promise<number> {
  const testArgs = argv.filter((arg) => arg !== SKIP);
  if (testArgs.length === argv.length) {
    const checked = await typecheck(cwd);
    if (checked !== ExitCode.ok) return checked;
  }
  return await runChild([process.execPath, "test", ...testArgs], cwd);
}

/** `tsc --noEmit -p .` in `cwd`, its errors printed as tsc prints them; a project without a tsconfig is skipped. */
async function typecheck(cwd: string): Promise<number> {
  if (!existsSync(join(cwd, "tsconfig.json"))) {
    console.error(`kobun test: no tsconfig.json in ${cwd}: running the tests without typechecking`);
    return ExitCode.ok;
  }
  const tsc = projectTsc(cwd);
  if (!tsc) {
    throw new UsageError(
      `kobun test typechecks first, with the project's TypeScript, and none is installed under ${cwd} ` +
        `(no node_modules/.bin/tsc): npm install --save-dev typescript, or pass ${SKIP}`,
      SKIP,
    );
  }
  // tsc's bin is a Node script; the Bun running kobun runs it (the machine may have Node only for npm).
  const code = await runChild([process.execPath, tsc, "--noEmit", "-p", "."], cwd);
  if (code !== 0) console.error(`kobun test: tsc found type errors (above), so no test ran; fix them, or pass ${SKIP}`);
  return code === 0 ? ExitCode.ok : ExitCode.crash;
}

/** The nearest node_modules/.bin/tsc from `cwd` up, as npm scripts would find it. */
function projectTsc(cwd: string): string | undefined {
  for (let dir = cwd; ; dir = dirname(dir)) {
    const tsc = join(dir, "node_modules", ".bin", "tsc");
    if (existsSync(tsc)) return tsc;
    if (dirname(dir) === dir) return undefined;
  }
}

async function runChild(command: string[], cwd: string): Promise<number> {
  const child = Bun.spawn(command, { cwd, stdio: ["inherit", "inherit", "inherit"] });
  // Ctrl+C reaches the whole process group; a SIGTERM sent to kobun alone is passed on.
  const forward = () => child.kill("SIGTERM");
  process.once("SIGTERM", forward);
  try {
    const code = await child.exited;
    return child.signalCode ? ExitCode.crash : code;
  } finally {
    process.off("SIGTERM", forward);
  }
}
