// `kobun dev`: the operator against the embedded sandbox API server (no cluster needed), with
// the handlers' CRDs installed and, with --demo, a walk-through of the sample objects.
// Loaded only for this command, so `kobun run` never loads the sandbox.

import { parseRunFlags, resolveSettings, RUN_FLAGS, scanFlags, UsageError } from "../../config/index.ts";
import { run } from "../../runtime/index.ts";
import { ExitCode } from "../../runtime/exits.ts";
import { KubeClient } from "../../kube/index.ts";
import { peeringCRDsYAML } from "../../peering/index.ts";
import { applyManifests, runDemo, startSandbox } from "../../runtime/dev.ts";
import { loggerFor, withDefinitions } from "../../runtime/index.ts";
import { defaultHandlerPaths, loadHandlers, type Embedded, type Manifest } from "../handlers.ts";
import { stopSignal, stoppedEarly } from "./signals.ts";
import { refuseHandlerPaths } from "../args.ts";
import { watchHandlers, WORKER_GO, WORKER_READY } from "./dev-watch.ts";
import type { Settings } from "../../config/index.ts";

type Logger = ReturnType<typeof loggerFor>;

interface DevFlags {
  demo: boolean;
  once: boolean;
  watch: boolean;
  worker?: string;
  /** The other arguments: `kobun run`'s flags and the handler files. */
  rest: string[];
}

/** Flags only `kobun dev` takes (and --worker=, its own --watch child's); the rest are `kobun run`'s. */
const DEV_FLAGS = [{ key: "demo", long: "demo" }, { key: "once", long: "once" }, { key: "watch", long: "watch" }];

function takeDevFlags(argv: string[]): DevFlags {
  // A misspelt flag is named against dev's flags too (`--demoo`: did you mean --demo?), not run's alone.
  scanFlags(argv.filter((arg) => !arg.startsWith("--worker=")), [...DEV_FLAGS, ...RUN_FLAGS], () => {});
  const worker = argv.find((arg) => arg.startsWith("--worker="))?.slice("--worker=".length);
  const own = (arg: string) => arg === "--demo" || arg === "--once" || arg === "--watch" || arg.startsWith("--worker=");
  const rest = argv.filter((arg) => !own(arg));
  const once = argv.includes("--once");
  const demo = argv.includes("--demo") || once;
  return { demo, once, watch: argv.includes("--watch"), worker, rest };
}

export async function devCommand(argv: string[], embedded: Embedded): Promise<number> {
  const dev = takeDevFlags(argv);
  const { flags, positionals } = parseRunFlags(dev.rest);
  if (dev.worker === undefined) refuseHandlerPaths("dev", positionals, embedded.handlersLoaded);
  if (flags.kubeconfig || flags.context) {
    const why = "kobun dev runs against its own sandbox; use kobun run for --kubeconfig/--context";
    throw new UsageError(why, "--kubeconfig");
  }
  // The sandbox is one process's own API server: nobody else to peer with, unless --dev asks to (it peers:
  // an operator run against the sandbox with `kobun run --kubeconfig` then freezes while this one runs).
  // The sandbox calls the handlers' webhooks (if any) on a free loopback port, as a cluster would.
  const webhooks = flags.webhooksListen === undefined ? { webhooksUrl: "https://127.0.0.1:0" } : {};
  const resolved = resolveSettings({
    flags: { standalone: true, ...webhooks, ...flags }, cwd: process.cwd(), env: process.env,
  });
  // The sandbox is all there is to watch: no "no namespaces given ... pass -n NS or -A" warning for it.
  const fileSettings = { ...resolved, namespaces: { ...resolved.namespaces, defaulted: false } };
  const logger = loggerFor(fileSettings);
  if (dev.worker !== undefined) return await devWorker(dev.worker, positionals, fileSettings, logger);
  if (dev.watch) {
    if (embedded.handlersLoaded) {
      throw new UsageError(
        "kobun dev --watch reloads handler sources; a compiled operator has its handlers built in " +
          "(run npx kobun dev --watch in the project)",
        "--watch",
      );
    }
    if (dev.demo) throw new UsageError("kobun dev --watch and --demo/--once exclude each other", "--watch");
    const runFlags = dev.rest.filter((arg) => !positionals.includes(arg));
    return await devWatch(defaultHandlerPaths(positionals), runFlags);
  }
  const loaded = embedded.handlersLoaded ? embedded.manifests : await loadHandlers(defaultHandlerPaths(positionals));
  return await devSession(withPeering(withDefinitions(loaded), fileSettings), dev, fileSettings, logger);
}

/** With --dev the operator peers: the sandbox then serves the peering CRDs too, as `kobun manifests` installs them. */
function withPeering(manifests: Manifest[], settings: Settings): Manifest[] {
  if (settings.peering.standalone) return manifests;
  const group = settings.peering.group;
  return [...manifests, { name: `peering-${group}.yaml`, text: peeringCRDsYAML(group) }];
}

/** One `kobun dev`: a sandbox with the handlers' CRDs, the operator against it, and the demo if asked. */
async function devSession(manifests: Manifest[], dev: DevFlags, settings: Settings, logger: Logger): Promise<number> {
  const stop = stopSignal();
  // Authenticated, since it runs as long as the developer likes on a machine others may share;
  // over HTTPS, since kubectl sends no token over plain http.
  const sandbox = await startSandbox({ auth: "token", tls: true });
  try {
    // The sandbox speaks HTTP/1.1 only: asked so at once, not found out with a failed request and a log line.
    const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath, logger, http1: true });
    const installed = await applyManifests(client, manifests, logger, stop.signal);
    const ready = { url: sandbox.url, kubeconfig: sandbox.kubeconfigPath, installed: installed.join(",") };
    logger.info("sandbox API server ready", ready);
    console.log(greeting(sandbox, "Ctrl+C to stop."));
    const operatorStop = new AbortController();
    stop.signal.addEventListener("abort", () => operatorStop.abort(stop.signal.reason), { once: true });
    let listedNow = () => {};
    const listed = new Promise<void>((resolve) => (listedNow = resolve));
    const running = run({ signal: operatorStop.signal, settings, client, logger, onReady: () => listedNow() });
    if (dev.demo) {
      // After the operator's first LIST: a sample made before it would be found listed, or deleted unseen.
      await Promise.race([listed, running]);
      const demo = runDemo(client, manifests, logger, stop.signal).catch((error) => {
        // Ctrl+C or SIGTERM in the middle of it is a clean stop, whatever the step it cut short says.
        if (stop.signal.aborted) return true;
        logger.error("demo failed", { error: error instanceof Error ? error.message : String(error) });
        return false;
      });
      const ok = await demo;
      if (dev.once) {
        operatorStop.abort(new DOMException("demo finished", "AbortError"));
        await running;
        return ok ? ExitCode.ok : ExitCode.fatal;
      }
    }
    await running;
    return ExitCode.ok;
  } catch (error) {
    if (stoppedEarly(stop, error)) return ExitCode.ok;
    throw error;
  } finally {
    stop.dispose();
    await sandbox.stop();
  }
}

/** The session of `kobun dev --watch`: the sandbox here, the operator in workers (dev-watch.ts). */
async function devWatch(paths: string[], runFlags: string[]): Promise<number> {
  if (paths.length === 0) {
    throw new UsageError("kobun dev --watch: no handlers to watch (no ./handlers directory, none named)", "--watch");
  }
  const stop = stopSignal();
  const sandbox = await startSandbox({ auth: "token", tls: true });
  try {
    console.log(greeting(sandbox, `watching ${paths.join(", ")}; Ctrl+C to stop.`));
    const kubeconfig = sandbox.kubeconfigPath;
    await watchHandlers({ paths, kubeconfig, flags: runFlags, cwd: process.cwd(), signal: stop.signal });
    return ExitCode.ok;
  } finally {
    stop.dispose();
    await sandbox.stop();
  }
}

/**
 * One generation of `kobun dev --watch`: loads the handlers and installs their CRDs into the
 * session's sandbox, says so, and starts the operator only when told (the previous generation
 * has stopped by then). A load error ends it with the error on stdout, for the session to show.
 */
async function devWorker(
  kubeconfig: string, positionals: string[], settings: Settings, logger: Logger,
): Promise<number> {
  const stop = stopSignal();
  try {
    let manifests: Manifest[];
    try {
      manifests = withPeering(withDefinitions(await loadHandlers(defaultHandlerPaths(positionals))), settings);
    } catch (error) {
      console.log(Bun.inspect(error));   // a BuildMessage too: the file, line and column of a syntax error
      return ExitCode.crash;
    }
    const client = await KubeClient.connect({ kubeconfig, logger, http1: true }); // the sandbox: HTTP/1.1 only
    await applyManifests(client, manifests, logger, stop.signal);
    console.log(WORKER_READY);
    if (!(await told(WORKER_GO, stop.signal))) return ExitCode.ok;
    await run({ signal: stop.signal, settings, client, logger });
    return ExitCode.ok;
  } finally {
    stop.dispose();
  }
}

/** What `kobun dev` prints once its sandbox serves: where it is, how to look into it, and `then`. */
function greeting(sandbox: { url: string; kubeconfigPath: string }, then: string): string {
  return `kobun dev: sandbox at ${sandbox.url}\n  kubectl --kubeconfig ${sandbox.kubeconfigPath} get all -A\n  ${then}`;
}

/** True once stdin carries `line`; false when stdin ends (the session is gone) or `signal` aborts. */
async function told(line: string, signal: AbortSignal): Promise<boolean> {
  const stdin = Bun.stdin.stream().getReader();
  const aborted = new Promise<false>((done) => signal.addEventListener("abort", () => done(false), { once: true }));
  let text = "";
  for (;;) {
    const next = await Promise.race([stdin.read(), aborted]);
    if (next === false || next.done) return false;
    text += new TextDecoder().decode(next.value);
    if (text.split("\n").includes(line)) return true;
  }
}
