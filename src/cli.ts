// The `kobun` command line: argument dispatch for run, dev, freeze, resume, manifests, init, build, test,
// docs, generate, version, and the mapping of every way of ending to a distinct exit code (README: "Exit codes").
// It installs the signal handlers; the runtime below it never does.
//
// The commands live in cli/ by audience: cli/operator/ (run, dev, freeze, resume: what a
// compiled operator is for), cli/manifests/ (what deploys it), cli/project/ (init, build, test,
// docs, generate: tools for the author's project). Files directly in cli/ are shared by them: args.ts
// (one flag grammar for every command) and handlers.ts (loading the handlers, or taking those
// a binary carries). The audiences never import each other (test/contracts/rooms.ts, FORBIDDEN).

// Each command's module is imported when that command runs: `kobun run` must not pay at
// start-up for the sandbox, the YAML printer or the peering tools.
import { ConfigError, UsageError, runFlagsHelp } from "./config/index.ts";
import { ExitCode, FatalError } from "./runtime/exits.ts";
import { ApiError, ConnectionError, KubeconfigError } from "./kube/index.ts";
import { RegistrationError } from "./declaring/index.ts";
import type { Embedded } from "./cli/handlers.ts";
import packageJson from "../package.json" with { type: "json" };

const HELP = `kobun ${packageJson.version}: Kubernetes operators in TypeScript, in one binary.

Usage: kobun <command> [flags]

Commands:
  run         Run the operator against a cluster (kubeconfig, context or in-cluster).
  dev         Run the operator against the embedded sandbox API server (no cluster needed).
              --demo creates, updates and deletes the sample objects; --once exits after it.
              --watch restarts the operator when a handler file changes (sandbox and objects kept).
  freeze      Freeze operators of lower priority with a manual peering record.
  resume      Remove a manual peering record.
  manifests   Print CRDs, RBAC and a Deployment for this operator.
  init        init DIR: scaffold an operator project of your own (package.json, a typed handler, its test).
  build       Compile the runtime and ./handlers into one executable (--target for other platforms).
  test        Run the project's tests (bun test), e.g. with kobun/testing.
  docs        Print where kobun's guides are (docs/ in the installed package) and list them.
  generate    generate types --crd FILE | --from-cluster --kubeconfig FILE: \
TypeScript interfaces from CRDs (all versions).
  version     Print the version.

Run "kobun <command> --help" for a command's flags.`;

const MANIFESTS_HELP = `Usage: kobun manifests [--name NAME] [--operator-namespace NS] [--image IMAGE] \
[--env NAME=VALUE ...] [run flags: -n NS | -A, --standalone, --config FILE, ...]
Prints YAML to stdout: the handlers' CRDs, the peering CRDs, a least-privilege ServiceAccount,
ClusterRole (or Role per namespace) with its binding, and a Deployment.
  --name NAME    the objects' name (default: the name in ./package.json, else kobun-operator)
  --image IMAGE  the Deployment's image (default: NAME:latest)
  --operator-namespace NS  where the ServiceAccount, the Deployment and its ConfigMap and Service go
                 (default: default); the RBAC goes where the watched namespaces are
  --env NAME=VALUE  an environment variable of the operator's own, set in the Deployment (repeatable)`;

export async function main(
  argv: string[], embedded: Embedded = { handlersLoaded: false, manifests: [] },
): Promise<never> {
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
        return await (await import("./cli/operator/run.ts")).runCommand(rest, embedded);
      case "dev":
        return await devCommand(rest, embedded, wantsHelp);
      case "freeze":
      case "resume":
        if (wantsHelp) return help((await import("./cli/operator/peering.ts")).peeringHelp);
        return await (await import("./cli/operator/peering.ts")).peeringCommand(command, rest);
      case "manifests":
        if (wantsHelp) return help(MANIFESTS_HELP);
        return await (await import("./cli/manifests/manifests.ts")).manifestsCommand(rest, embedded);
      case "init":
      case "build":
      case "test":
      case "docs":
        // They need the package's files (sources, scaffold, guides) and Bun: a compiled operator has neither.
        if (embedded.handlersLoaded) {
          const why = `runs from the kobun package (npx kobun ${command}), not from a compiled operator`;
          throw new UsageError(`kobun ${command} ${why}`, command);
        }
        if (command !== "docs") return await projectCommand(command, rest, wantsHelp);
        if (wantsHelp) return help((await import("./cli/project/docs.ts")).DOCS_HELP);
        refuseArguments(command, rest);
        return (await import("./cli/project/docs.ts")).docsCommand();
      case "generate":
        if (wantsHelp) return help((await import("./cli/project/typegen.ts")).GENERATE_HELP);
        return await (await import("./cli/project/typegen.ts")).generateCommand(rest);
      case "version":
      case "--version":
        if (wantsHelp) return help("Usage: kobun version\nPrints the version of kobun and of the Bun it runs on.");
        refuseArguments("version", rest);
        console.log(`kobun ${packageJson.version} (bun ${Bun.version})`);
        return ExitCode.ok;
      case "help":
      case "--help":
      case "-h":
        // `kobun help run` is `kobun run --help`, as `git help` and `go help` read it.
        if (command === "help" && rest[0] !== undefined && !rest[0].startsWith("-")) {
          return await dispatch([rest[0], "--help"], embedded);
        }
        return help(HELP);
      default:
        throw new UsageError(
          `unknown command ${JSON.stringify(command)}; ` +
            "commands: run, dev, freeze, resume, manifests, init, build, test, docs, generate, version",
          command,
        );
    }
  } catch (error) {
    return reportFailure(error);
  }
}

async function devCommand(rest: string[], embedded: Embedded, wantsHelp: boolean): Promise<number> {
  // dev runs against its own sandbox: no --kubeconfig or --context (dev.ts refuses them).
  const usage = "kobun dev [--demo] [--once] [--watch] [flags] [handler files...]";
  if (wantsHelp) return help(runFlagsHelp(usage, ["kubeconfig", "context"]));
  if (embedded.sandbox === false) {
    throw new UsageError(
      "this operator was built without the sandbox: run kobun dev from the project (npx kobun dev), " +
        "or build with kobun build --with-sandbox",
      "dev",
    );
  }
  return await (await import("./cli/operator/dev.ts")).devCommand(rest, embedded);
}

async function projectCommand(command: "init" | "build" | "test", rest: string[], wantsHelp: boolean): Promise<number> {
  if (command === "build") {
    const { BUILD_HELP, buildCommand } = await import("./cli/project/build.ts");
    return wantsHelp ? help(BUILD_HELP) : await buildCommand(rest);
  }
  if (command === "init") {
    const { INIT_HELP, initCommand } = await import("./cli/project/init.ts");
    return wantsHelp ? help(INIT_HELP) : await initCommand(rest);
  }
  const { TEST_HELP, testCommand } = await import("./cli/project/test.ts");
  return wantsHelp && rest.length === 1 ? help(TEST_HELP) : await testCommand(rest);
}

/** `version` and `docs` take nothing: a stray word or flag is a mistake to be told of (exit 2), not ignored. */
function refuseArguments(command: string, rest: string[]): void {
  const [first] = rest;
  if (first === undefined) return;
  const what = first.startsWith("-") ? `unknown flag ${first}` : `unexpected argument ${JSON.stringify(first)}`;
  throw new UsageError(`kobun ${command} takes no arguments: ${what}`, first);
}

function help(text: string): number {
  console.log(text);
  return ExitCode.ok;
}

/** Says how a command ended, in one line (a crash with its stack); the exit code for it. */
export function reportFailure(error: unknown): number {
  if (error instanceof RegistrationError) {
    console.error(`kobun: invalid handler registration: ${error.message}`);
    return ExitCode.config;
  }
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
  const unreachable = error instanceof ConnectionError || error instanceof KubeconfigError;
  if (unreachable || (error instanceof ApiError && error.code === 401)) {
    console.error(`kobun: cannot connect to the API server: ${error.message}`);
    return ExitCode.connect;
  }
  if (error instanceof ApiError) {
    console.error(`kobun: the API server refused: ${error.message}`);
    return ExitCode.fatal;
  }
  console.error(`kobun: crashed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  return ExitCode.crash;
}

if (import.meta.main) await main(process.argv.slice(2));
