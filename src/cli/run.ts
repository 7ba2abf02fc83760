// `kobun run`: the operator against a cluster (kubeconfig, context, or in-cluster).

import { parseRunFlags, resolveSettings } from "../config/index.ts";
import { run } from "../runtime/operator.ts";
import { ExitCode } from "../runtime/exits.ts";
import { loggerFor } from "../runtime/logging.ts";
import { defaultHandlerPaths, loadHandlers, type Embedded } from "./handlers.ts";
import { stopSignal } from "./signals.ts";

export async function runCommand(argv: string[], embedded: Embedded): Promise<number> {
  const { flags, positionals } = parseRunFlags(argv);
  const settings = resolveSettings({ flags, cwd: process.cwd(), env: process.env });
  if (!embedded.handlersLoaded) await loadHandlers(defaultHandlerPaths(positionals));
  const stop = stopSignal();
  try {
    await run({ signal: stop.signal, settings, logger: loggerFor(settings), peeringMandatory: flags.peering !== undefined });
    return ExitCode.ok;
  } finally {
    stop.dispose();
  }
}
