// A tiny flag reader for the commands other than `run`/`dev` (whose flags config/ owns).

import { UsageError } from "../config/index.ts";

export interface FlagSpec {
  [long: string]: { short?: string; value: boolean };
}

export function readFlags(argv: string[], spec: FlagSpec): { values: Record<string, string | true>; positionals: string[] } {
  const values: Record<string, string | true> = {};
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith("-")) {
      positionals.push(arg);
      continue;
    }
    const [typed, inline] = arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)] : [arg, undefined];
    const long = typed.startsWith("--") ? typed.slice(2) : Object.keys(spec).find((k) => spec[k]!.short === typed.slice(1));
    const entry = long !== undefined ? spec[long] : undefined;
    if (long === undefined || entry === undefined) {
      throw new UsageError(`unknown flag ${typed}; known flags: ${Object.keys(spec).map((k) => `--${k}`).join(", ")}`, typed);
    }
    if (!entry.value) {
      values[long] = true;
      continue;
    }
    const value = inline ?? argv[++i];
    if (value === undefined) throw new UsageError(`${typed} needs a value`, typed);
    values[long] = value;
  }
  return { values, positionals };
}

export function numberFlag(values: Record<string, string | true>, name: string, fallback: number): number {
  const raw = values[name];
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (raw === true || !Number.isFinite(n)) throw new UsageError(`--${name} expects a number, got ${JSON.stringify(raw)}`, `--${name}`);
  return n;
}

export function stringFlag(values: Record<string, string | true>, name: string): string | undefined {
  const raw = values[name];
  if (raw === true) throw new UsageError(`--${name} needs a value`, `--${name}`);
  return raw;
}
