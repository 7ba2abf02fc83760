// `kobun test`: the project's tests, with the Bun that runs kobun (the project's pinned
// devDependency when started through `npx kobun`), in the current directory. It typechecks first
// (`tsc --noEmit -p .` with the project's TypeScript, as kobun's own `npm test` does): Bun runs
// TypeScript without checking it, so a mistyped call would otherwise pass the tests and fail at run
// time. `--no-typecheck` skips that; every other argument goes to `bun test` unchanged (a file
// filter, -t NAME, --timeout MS, ...). `--simulate=N` sets the default schedule budget of every
// simulate() call that names none, through an environment variable simulate() reads.

import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { closestMatch, UsageError } from "../../config/index.ts";
import { ExitCode } from "../../runtime/exits.ts";

export const TEST_HELP = `Usage: kobun test [--no-typecheck] [--simulate[=N]] [bun test arguments]
Typechecks the project (tsc --noEmit -p . with the project's TypeScript; it stops there on a type
error), then runs "bun test" in the current directory with kobun's Bun: every *.test.ts file, e.g.
the handler tests that use kobun/testing. Arguments (files, -t NAME, --timeout MS) go to bun test
(which ignores a flag it does not know: a misspelling of the two below is refused instead).
  --no-typecheck   run the tests without typechecking first
  --simulate=N     every simulate() call that sets no { schedules } runs up to N schedules (a positive
                   integer) instead of its default 16: explore more without editing the tests.
                   --simulate alone keeps the default (it sets nothing).`;

const SKIP = "--no-typecheck";
const SIMULATE = "--simulate";
/** read by simulate() (src/testing/simulate.ts) when its options set no `schedules` */
const SIMULATE_SCHEDULES_ENV = "KOBUN_SIMULATE_SCHEDULES";

export async function testCommand(argv: string[], cwd = process.cwd()): Promise<number> {
  refuseNearMisses(argv);
  const spaced = argv.findIndex((arg, i) => arg === SIMULATE && /^[0-9]+$/.test(argv[i + 1] ?? ""));
  if (spaced >= 0) {
    // bun would take the number for a path filter and run only the files it matches.
    const n = argv[spaced + 1]!;
    const why = `write ${SIMULATE}=${n} (a number alone is a path filter)`;
    throw new UsageError(`kobun test ${SIMULATE} ${n}: ${why}`, SIMULATE);
  }
  const simulateArgs = argv.filter((arg) => arg === SIMULATE || arg.startsWith(`${SIMULATE}=`));
  const budget = simulateBudget(simulateArgs);
  const testArgs = argv.filter((arg) => arg !== SKIP && !simulateArgs.includes(arg));
  if (!argv.includes(SKIP)) {
    const checked = await typecheck(cwd);
    if (checked !== ExitCode.ok) return checked;
  }
  const env = { ...process.env };
  if (budget !== undefined) env[SIMULATE_SCHEDULES_ENV] = String(budget);
  return await runChild([process.execPath, "test", ...testArgs], cwd, env);
}

/**
 * A flag two edits or fewer from kobun's own is a typo of it: bun test would ignore it without a word
 * (`--simulat=200` left the default budget). None of bun test's flags is that near (`--isolate`: 3).
 */
function refuseNearMisses(argv: string[]): void {
  for (const arg of argv) {
    const name = arg.split("=")[0]!;
    if (!name.startsWith("--") || name === SKIP || name === SIMULATE) continue;
    const meant = closestMatch(name, [SKIP, SIMULATE], 2);
    if (meant) throw new UsageError(`kobun test: unknown flag ${name}; did you mean ${meant}?`, name);
  }
}

/** N of the last `--simulate=N`; undefined for none or a bare `--simulate` (simulate()'s own default) */
function simulateBudget(simulateArgs: string[]): number | undefined {
  const last = simulateArgs.at(-1);
  if (last === undefined || last === SIMULATE) return undefined;
  const value = last.slice(SIMULATE.length + 1);
  if (!/^[1-9][0-9]*$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(
      `kobun test ${last}: the schedule budget must be a positive whole number, e.g. ${SIMULATE}=200`, SIMULATE,
    );
  }
  return Number(value);
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

async function runChild(command: string[], cwd: string, env = process.env): Promise<number> {
  const child = Bun.spawn(command, { cwd, env, stdio: ["inherit", "inherit", "inherit"] });
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
