// Called by a compiled operator's entry (project/build.ts) to load its handler modules, ahead of the CLI:
// what one throws while loading (a RegistrationError: exit 3; anything else: a crash, exit 1) is
// reported as kobun reports every failure, in one line with its exit code (README "Exit codes"), not
// with the runtime's uncaught-exception banner.

import { reportFailure } from "../../cli.ts";

/** Imports the handler modules one after another, in the given order, as `kobun run` does from source. */
export async function loadHandlerModules(imports: readonly (() => Promise<unknown>)[]): Promise<void> {
  try {
    for (const load of imports) await load();
  } catch (error) {
    process.exit(reportFailure(error));
  }
}
