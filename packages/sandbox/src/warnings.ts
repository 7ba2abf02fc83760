// The Warning headers of one request, as kube-apiserver's warning recorder writes them: what
// admission webhooks return in `response.warnings` reaches the client as `Warning: 299 - "..."`,
// on the allowed write and on the denial alike. The recorder is per request (AsyncLocalStorage),
// so that the admission chain need not thread it through every write path.
// Not modelled: the 4 KiB total limit past which kube-apiserver truncates each warning.

// Required when the sandbox starts, not imported: a bundle hoists static imports of builtins to
// its start, and `kobun run` must not load node:async_hooks for a sandbox it never runs.
const { AsyncLocalStorage } = require("node:async_hooks") as typeof import("node:async_hooks");
const current = new AsyncLocalStorage<string[]>();

/** Records a warning for the request being served (empty and repeated texts are dropped, as upstream). */
export function addWarning(text: string): void {
  const warnings = current.getStore();
  if (!warnings || !text || warnings.includes(text)) return;
  warnings.push(text);
}

/** Runs `serve` with a warning recorder; the response it gives (or `onError`'s) carries the headers. */
export async function withWarnings(
  serve: () => Promise<Response>, onError: (error: unknown) => Response,
): Promise<Response> {
  const warnings: string[] = [];
  const res = await current.run(warnings, serve).catch(onError);
  for (const text of warnings) res.headers.append("Warning", warningHeader(text));
  return res;
}

/** net.NewWarningHeader(299, "-", text): the text quoted, `\` and `"` escaped. */
export function warningHeader(text: string): string {
  return `299 - "${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}
