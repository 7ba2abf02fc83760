// The CLI's signal handling: the first SIGINT/SIGTERM aborts the returned signal (a graceful
// stop); a second one exits at once with ExitCode.forced. Only the CLI installs these:
// `run()` never touches process signals.

import { ExitCode } from "../../runtime/exits.ts";

export function stopSignal(
  onSecond: () => void = () => process.exit(ExitCode.forced),
): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const handler = (name: NodeJS.Signals) => {
    if (controller.signal.aborted) onSecond();
    else controller.abort(new DOMException(`received ${name}`, "AbortError"));
  };
  process.on("SIGINT", handler);
  process.on("SIGTERM", handler);
  return {
    signal: controller.signal,
    dispose() {
      process.off("SIGINT", handler);
      process.off("SIGTERM", handler);
    },
  };
}

/**
 * Whether `error` is only the stop that `stop` asked for, arriving before the operator ran (while
 * it still connected, installed CRDs or retried): a clean stop too, exit 0 (README: "Exit codes").
 */
export function stoppedEarly(stop: { signal: AbortSignal }, error: unknown): boolean {
  const abort = error === stop.signal.reason || (error instanceof Error && error.name === "AbortError");
  return stop.signal.aborted && abort;
}
