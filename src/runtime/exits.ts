// Exit codes and the fatal error that carries one. The CLI maps every way of ending to one
// of these, so scripts and orchestrators can tell a bad flag from a dead API server.

/** The exit codes of `kobun` (README: "Exit codes"), by name. */
export const ExitCode = {
  /** A clean stop on SIGINT/SIGTERM (or the end of a one-shot command). */
  ok: 0,
  /** An unexpected crash: a bug in kobun or in a handler module at load time. */
  crash: 1,
  /** Bad command line: unknown flag, missing value, unknown command. */
  usage: 2,
  /** Bad configuration: kobun.yaml or flag values that do not validate. */
  config: 3,
  /** Cannot reach or authenticate to the API server. */
  connect: 4,
  /**
   * A fatal runtime error: a handled resource is missing, permissions are lacking (403s: streams/forbidden.ts),
   * a listener's address is taken.
   */
  fatal: 5,
  /** An on.login or on.startup handler failed (or no login gave credentials): the operator did not start. */
  startup: 6,
  /** A second SIGINT/SIGTERM during shutdown: exit at once (128 + SIGINT, by convention). */
  forced: 130,
} as const;

export type ExitCodeName = keyof typeof ExitCode;

/** An error that ends the operator with a one-line reason and a distinct exit code. */
export class FatalError extends Error {
  override readonly name = "FatalError";
  constructor(
    readonly kind: ExitCodeName,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  get exitCode(): number {
    return ExitCode[this.kind];
  }
}
