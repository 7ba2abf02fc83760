// The `kobun` command line: argument dispatch for run, dev, freeze, resume, manifests and
// version, and the mapping of every way of ending to a distinct exit code (README: "Exit codes").
// It installs the signal handlers; the runtime below it never does.

import { ConfigError, UsageError, parseRunFlags, resolveSettings, runFlagsHelp } from "./config/index.ts";
import { registry } from "./handling/registry.ts";
import { ExitCode, FatalError } from "./runtime/exits.ts";
import { defaultHandlerPaths, loadHandlers, type Embedded } from "./cli/handlers.ts";
import { devCommand, runCommand } from "./cli/run.ts";
import { peeringCommand, peeringHelp } from "./cli/peering.ts";
import { renderManifests } from "./cli/manifests.ts";
import { readFlags, stringFlag } from "./cli/args.ts";
import packageJson from "../package.json" with { type: "json" };

const HELP = `kobun ${packageJson.version}: Kubernetes operators in TypeScript, in one binary.

Usage: kobun <command> [flags]

Commands:
  run         Run the operator against a cluster (kubeconfig, context or in-cluster).
  dev         Run the operator against the embedded sandbox API server (no cluster needed).
              --demo creates, updates and deletes the sample objects; --once exits after it.
  freeze      Freeze operators of lower priority with a manual peering record.
  resume      Remove a manual peering record.
  manifests   Print CRDs, RBAC and a Deployment for this operator.
  version     Print the version.

Run "kobun <command> --help" for a command's flags.`;

const MANIFESTS_HELP = `Usage: kobun manifests [--name NAME] [--namespace NS] [--image IMAGE] [--config FILE] [run flags...]
Prints YAML to stdout: the handlers' CRDs, the peering CRDs, a least-privilege ServiceAccount,
ClusterRole (or Role per namespace) with its binding, and a Deployment.`;

export async function main(argv: string[], embedded: Embedded = { handlersLoaded: false, manifests: [] }): Promise<never> {
  const code = await dispatch(argv, embedded);
  process.exit(code);
}

export async function dispatch(argv: string[], embedded: Embedded): Promise<number> {
  const [command = "help", ...rest] = argv;
  const wantsHelp = rest.includes("--help") || rest.includes("-h");
  try {
    switch (command) {
      case "run":
        if (wantsHelp) return help(runFlagsHelp());
        return await runCommand(rest, embedded);
      case "dev":
        if (wantsHelp) return help(`${runFlagsHelp().replace("kobun run", "kobun dev [--demo] [--once]")}`);
        return await devCommand(rest, embedded);
      case "freeze":
      case "resume":
        if (wantsHelp) return help(peeringHelp);
        return await peeringCommand(command, rest);
      case "manifests":
        if (wantsHelp) return help(MANIFESTS_HELP);
        return await manifestsCommand(rest, embedded);
      case "version":
      case "--version":
        console.log(`kobun ${packageJson.version} (bun ${Bun.version})`);
        return ExitCode.ok;
      case "help":
      case "--help":
      case "-h":
        return help(HELP);
      default:
        throw new UsageError(`unknown command ${JSON.stringify(command)}; commands: run, dev, freeze, resume, manifests, version`, command);
    }
  } catch (error) {
    return reportFailure(error);
  }
}

function help(text: string): number {
  console.log(text);
  return ExitCode.ok;
}

async function manifestsCommand(argv: string[], embedded: Embedded): Promise<number> {
  const own = readFlags(argv.filter((_, i) => isOwnManifestFlag(argv, i)), { name: { value: true }, image: { value: true }, "operator-namespace": { value: true } });
  const { flags, positionals } = parseRunFlags(argv.filter((_, i) => !isOwnManifestFlag(argv, i)));
  const settings = resolveSettings({ flags, cwd: process.cwd() });
  const manifests = embedded.handlersLoaded ? embedded.manifests : await loadHandlers(defaultHandlerPaths(positionals));
  const name = stringFlag(own.values, "name") ?? "kobun-operator";
  process.stdout.write(
    renderManifests({
      name,
      namespace: stringFlag(own.values, "operator-namespace") ?? "default",
      image: stringFlag(own.values, "image") ?? `${name}:latest`,
      settings,
      selectors: registry.selectors(),
      manifests,
    }),
  );
  return ExitCode.ok;
}

/** `--name`, `--image`, `--operator-namespace` (and their values) belong to manifests, not to run flags. */
function isOwnManifestFlag(argv: string[], index: number): boolean {
  const own = (arg: string | undefined) => arg !== undefined && /^--(name|image|operator-namespace)(=|$)/.test(arg);
  const arg = argv[index];
  return own(arg) || (own(argv[index - 1]) && !argv[index - 1]!.includes("=") && !arg!.startsWith("-"));
}

function reportFailure(error: unknown): number {
  if (error instanceof UsageError) {
    console.error(`kobun: ${error.message}\nRun "kobun --help" for usage.`);
    return ExitCode.usage;
  }
  if (error instanceof ConfigError) {
    console.error(`kobun: invalid configuration:\n${error.message.replace(/^/gm, "  ")}`);
    return ExitCode.config;
  }
  if (error instanceof FatalError) {
    console.error(`kobun: ${error.message}`);
    return error.exitCode;
  }
  console.error(`kobun: crashed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  return ExitCode.crash;
}

if (import.meta.main) await main(process.argv.slice(2));
