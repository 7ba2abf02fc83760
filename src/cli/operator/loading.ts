// Imported by a compiled operator's entry (project/build.ts) right before its handler modules, which it
// imports statically, ahead of the CLI: what one throws while loading (a RegistrationError: exit
// 3; anything else: a crash, exit 1) is reported as kobun reports every failure, in one line
// with its exit code (README "Exit codes"), not with the runtime's uncaught-exception banner.
// Listening ends once they are loaded: later errors are the CLI's and the runtime's own.

import { reportFailure } from "../../cli.ts";

const failedWhileLoading = (error: unknown) => process.exit(reportFailure(error));
process.on("uncaughtException", failedWhileLoading);

/** The handler modules are loaded: stop listening. */
export function handlersLoaded(): void {
  process.off("uncaughtException", failedWhileLoading);
}
