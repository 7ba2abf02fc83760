// `kobun test`: the project's tests, with the Bun that runs kobun (the project's pinned
// devDependency when started through `npx kobun`), in the current directory. The arguments go
// to `bun test` unchanged (a file filter, -t NAME, --timeout MS, ...).

import { ExitCode } from "../../runtime/exits.ts";

export const TEST_HELP = `Usage: kobun test [bun test arguments]
Runs "bun test" in the current directory with kobun's Bun: every *.test.ts file, e.g. the
handler tests that use kobun/testing. Arguments (files, -t NAME, --timeout MS) go to bun test.`;

export async function testCommand(argv: string[], cwd = process.cwd()): Promise<number> {
  const child = Bun.spawn([process.execPath, "test", ...argv], { cwd, stdio: ["inherit", "inherit", "inherit"] });
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
