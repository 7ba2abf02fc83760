// What goes wrong while handler modules register, said as kobun says a bad configuration: one
// line naming the registration and the fix, exit code 3 (README "Exit codes"), never a stack
// trace. Every `on.*` call turns what it throws into a RegistrationError; a compiled operator
// imports its handler modules before its CLI runs, so cli/operator/loading.ts reports one thrown then.
// And the webhook id a function's name gives: a Kopf-style name (`validate_size`) is a fine
// handler id, but a webhook's id names it in DNS, so it is made a DNS label (`validate-size`).

/** A registration (`on.*`) that cannot work as written: the message names it and says what to do. */
export class RegistrationError extends Error {
  override readonly name = "RegistrationError";
}

/** `on` with every function turning what it throws into a RegistrationError (the message kept). */
export function registering<T extends object>(on: T): T {
  const wrapped: Record<string, unknown> = {};
  for (const [name, register] of Object.entries(on)) {
    wrapped[name] = (...args: unknown[]) => {
      try {
        return (register as (...a: unknown[]) => unknown)(...args);
      } catch (error) {
        if (error instanceof RegistrationError || !(error instanceof Error)) throw error;
        throw new RegistrationError(error.message, { cause: error });
      }
    };
  }
  return wrapped as T;
}

/** A webhook id: a DNS label (lowercase letters, digits, "-"; at most 63), as its configuration names it. */
export const WEBHOOK_ID = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/**
 * The id a webhook function's name gives, made a DNS label: `validate_size` and `validateSize`
 * → `validate-size`; undefined when nothing of the name is left.
 */
export function webhookIdOf(name: string): string | undefined {
  const id = name
    .replace(/([a-z0-9])([A-Z])/g, "$1-$2")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .slice(0, 63)
    .replace(/^-+|-+$/g, "");
  return id || undefined;
}
