// `kobun run`: the operator against a cluster (kubeconfig, context, or in-cluster).

import { parseRunFlags, resolveSettings, type Settings } from "../config/index.ts";
import { Logger, stderrSink } from "../util/log.ts";
import { run } from "../runtime/operator.ts";
import { ExitCode } from "../runtime/exits.ts";
import { defaultHandlerPaths, loadHandlers, type Embedded } from "./handlers.ts";
import { stopSignal } from "./signals.ts";

export function loggerFor(settings: Settings): Logger {
  return new Logger(stderrSink(settings.logging.level, settings.logging.format));
}

export async function runCommand(argv: string[], embedded: Embedded): Promise<number> {
  const { flags, positionals } = parseRunFlags(argv);
  const settings = resolveSettings({ flags, cwd: process.cwd() });
  if (!embedded.handlersLoaded) await loadHandlers(defaultHandlerPaths(positionals));
  const stop = stopSignal();
  try {
    await run({ signal: stop.signal, settings, logger: loggerFor(settings), peeringMandatory: flags.peering !== undefined });
    return ExitCode.ok;
  } finally {
    stop.dispose();
  }
}
