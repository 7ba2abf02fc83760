// The flags of the commands other than `run`/`dev`, read with config/'s parser (one grammar
// for every command: `--flag value`, `--flag=value`, `-f value`, switches, `--`); and what a compiled
// operator refuses of the arguments the same command takes from source.

import { scanFlags, UsageError } from "../config/index.ts";

export interface FlagTable {
  [long: string]: { short?: string; value: boolean };
}

/** `values` holds each flag's last value; `every` all of them, for a flag given more than once (`-n a -n b`). */
export function readFlags(
  argv: string[], table: FlagTable,
): { values: Record<string, string | true>; every: Record<string, (string | true)[]>; positionals: string[] } {
  const specs = Object.entries(table).map(([long, { short, value }]) => ({
    key: long, long, ...(short ? { short } : {}), ...(value ? { value: long.toUpperCase() } : {}),
  }));
  const values: Record<string, string | true> = {};
  const every: Record<string, (string | true)[]> = {};
  const positionals = scanFlags(argv, specs, (spec, _typed, value) => {
    values[spec.key] = value;
    (every[spec.key] ??= []).push(value);
  });
  return { values, every, positionals };
}

export function stringFlag(values: Record<string, string | true>, name: string): string | undefined {
  const raw = values[name];
  if (raw === true) throw new UsageError(`--${name} needs a value`, `--${name}`);
  return raw;
}

/**
 * Handler paths given to a compiled operator (its handlers built in by project/build.ts): refused (exit 2),
 * not ignored: it runs the handlers it was built with, and a path the user typed must not look taken.
 */
export function refuseHandlerPaths(command: string, positionals: readonly string[], handlersLoaded: boolean): void {
  if (!handlersLoaded || positionals.length === 0) return;
  throw new UsageError(
    `this operator was built with its handlers: handler paths (${positionals.join(" ")}) are read only when ` +
      `kobun runs from the project (npx kobun ${command} PATHS)`,
    positionals[0],
  );
}
