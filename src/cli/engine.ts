// The JavaScript engine's options for a compiled operator's `run`. JavaScriptCore's top tier
// (FTL) is left off: its compiler's code and working memory were most of what a burst's peak
// RSS had over the steady state, for no CPU per object gained (README: "The engine's options").
// JavaScriptCore reads its options only as a process starts, from BUN_JSC_* variables, so the
// binary execs itself once with them set (the same PID; ≈ 6 ms). A value the user gives is
// kept: BUN_JSC_useFTLJIT=1 brings FTL back.

/** What `run` sets when the environment does not say otherwise. */
export const ENGINE_OPTIONS: Readonly<Record<string, string>> = { BUN_JSC_useFTLJIT: "0" };

/**
 * The environment to exec `args` (the command line after the program) with, or undefined to
 * go on as is: not `run` (a one-shot command gains nothing and would pay the second start),
 * or every option is given already (by the user, or by the exec before this one).
 */
export function engineEnv(args: readonly string[], env: Readonly<Record<string, string | undefined>>): Record<string, string> | undefined {
  if (args[0] !== "run" || args.includes("--help") || args.includes("-h")) return undefined;
  const missing = Object.entries(ENGINE_OPTIONS).filter(([name]) => env[name] === undefined);
  if (missing.length === 0) return undefined;
  const next: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined) next[name] = value;
  for (const [name, value] of missing) next[name] = value;
  return next;
}

/** Execs this binary again with the engine's options when `run` lacks them; returns where exec is not possible (then the defaults hold). */
export function execWithEngineOptions(): void {
  const args = process.argv.slice(2);
  const env = engineEnv(args, process.env);
  if (!env) return;
  try {
    process.execve?.(process.execPath, [process.execPath, ...args], env);
  } catch {
    // No execve here (Windows) or it was refused: run on the engine's defaults.
  }
}
