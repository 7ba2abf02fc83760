// cli/operator/: the commands that run or steer an operator (run, dev, freeze, resume), their
// signals, and the compiled entry's load-time reporting: what a compiled operator is for.
// Never imports cli/project/ (tools that need the package and Bun's bundler) nor cli/manifests/:
// test/contracts/rooms.ts, FORBIDDEN.

// `kobun run`: the operator against a cluster (kubeconfig, context, or in-cluster).

import { findConfigFile, parseRunFlags, readConfigFile, resolveSettings } from "../../config/index.ts";
import { manifestCRDs, run } from "../../runtime/index.ts";
import { ExitCode } from "../../runtime/exits.ts";
import type { Embedded } from "../handlers.ts";
import { refuseHandlerPaths } from "../args.ts";
import { stopSignal, stoppedEarly } from "./signals.ts";

export async function runCommand(argv: string[], embedded: Embedded): Promise<number> {
  const { flags, positionals } = parseRunFlags(argv);
  refuseHandlerPaths("run", positionals, embedded.handlersLoaded);
  // The file is found and read here, with Bun.file: resolveSettings's own reads are node:fs's.
  const file = flags.config ?? (await findConfigFile(process.cwd())) ?? undefined;
  const fileData = file !== undefined ? await readConfigFile(file) : undefined;
  const settings = resolveSettings({ flags, file, fileData, env: process.env });
  let manifests = embedded.manifests;
  if (!embedded.handlersLoaded) {
    // Imported only here: a compiled binary has its handlers built in, and this module's node:fs costs it ≈ 2 MB.
    const { defaultHandlerPaths, loadHandlers } = await import("../handlers.ts");
    manifests = await loadHandlers(defaultHandlerPaths(positionals));
  }
  const stop = stopSignal();
  try {
    // run()'s logger: loggerFor(settings)
    const crds = manifestCRDs(manifests); // their names key kobun.yaml's resources, as in `kobun manifests`
    await run({ signal: stop.signal, settings, peeringMandatory: flags.peering !== undefined, crds });
    return ExitCode.ok;
  } catch (error) {
    if (stoppedEarly(stop, error)) return ExitCode.ok;
    throw error;
  } finally {
    stop.dispose();
  }
}
