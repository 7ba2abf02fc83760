// `kobun dev`: the operator against the embedded sandbox API server (no cluster needed), with
// the handlers' CRDs installed and, with --demo, a walk-through of the sample objects.
// Loaded only for this command, so `kobun run` never loads the sandbox.

import { parseRunFlags, resolveSettings, UsageError } from "../config/index.ts";
import { run } from "../runtime/operator.ts";
import { ExitCode } from "../runtime/exits.ts";
import { applyManifests, KubeClient, runDemo, startSandbox } from "../runtime/dev.ts";
import { loggerFor } from "../runtime/logging.ts";
import { defaultHandlerPaths, loadHandlers, type Embedded, type Manifest } from "./handlers.ts";
import { withDefinitions } from "../runtime/manifests.ts";
import { stopSignal } from "./signals.ts";

/** Flags only `kobun dev` takes; the rest are `kobun run`'s. */
function takeDevFlags(argv: string[]): { demo: boolean; once: boolean; rest: string[] } {
  const rest = argv.filter((arg) => arg !== "--demo" && arg !== "--once");
  const once = argv.includes("--once");
  const demo = argv.includes("--demo") || once;
  return { demo, once, rest };
}

export async function devCommand(argv: string[], embedded: Embedded): Promise<number> {
  const dev = takeDevFlags(argv);
  const { flags, positionals } = parseRunFlags(dev.rest);
  if (flags.kubeconfig || flags.context) throw new UsageError("kobun dev runs against its own sandbox; use kobun run for --kubeconfig/--context", "--kubeconfig");
  // The sandbox is one process's own API server: nobody else to peer with.
  // The sandbox calls the handlers' webhooks (if any) on a free loopback port, as a cluster would.
  const webhooks = flags.webhooksListen === undefined ? { webhooksUrl: "https://127.0.0.1:0" } : {};
  const fileSettings = resolveSettings({ flags: { standalone: true, ...webhooks, ...flags }, cwd: process.cwd(), env: process.env });
  const logger = loggerFor(fileSettings);
  const manifests: Manifest[] = withDefinitions(embedded.handlersLoaded ? embedded.manifests : await loadHandlers(defaultHandlerPaths(positionals)));

  const stop = stopSignal();
  // Authenticated, since it runs as long as the developer likes on a machine others may share;
  // over HTTPS, since kubectl sends no token over plain http.
  const sandbox = await startSandbox({ auth: "token", tls: true });
  try {
    const client = await KubeClient.connect({ kubeconfig: sandbox.kubeconfigPath, logger });
    const installed = await applyManifests(client, manifests, logger, stop.signal);
    logger.info("sandbox API server ready", { url: sandbox.url, kubeconfig: sandbox.kubeconfigPath, installed: installed.join(",") });
    console.log(`kobun dev: sandbox at ${sandbox.url}\n  kubectl --kubeconfig ${sandbox.kubeconfigPath} get all -A\n  Ctrl+C to stop.`);
    const operatorStop = new AbortController();
    stop.signal.addEventListener("abort", () => operatorStop.abort(stop.signal.reason), { once: true });
    const running = run({ signal: operatorStop.signal, settings: fileSettings, client, logger });
    if (dev.demo) {
      const demo = runDemo(client, manifests, logger, stop.signal).catch((error) => {
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
  } finally {
    stop.dispose();
    await sandbox.stop();
  }
}
