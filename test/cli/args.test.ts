// The flags of `kobun freeze`, `resume` and `manifests` follow the same grammar as `kobun run`'s:
// one parser (config/flags.ts) for every command.

import { expect, test } from "bun:test";
import { readFlags } from "../../src/cli/args.ts";
import { UsageError } from "../../src/config/index.ts";

const TABLE = { peering: { value: true }, namespace: { short: "n", value: true }, lifetime: { value: true }, clusterwide: { value: false } };

function usageError(argv: string[]): UsageError {
  try {
    readFlags(argv, TABLE);
  } catch (error) {
    if (error instanceof UsageError) return error;
    throw error;
  }
  throw new Error(`no UsageError for ${argv.join(" ")}`);
}

test("values, =values, short flags and switches are read; -- ends the flags", () => {
  expect(readFlags(["--peering", "p", "-n", "ns", "--lifetime=60", "--clusterwide", "--", "--not-a-flag"], TABLE)).toEqual({
    values: { peering: "p", namespace: "ns", lifetime: "60", clusterwide: true },
    every: { peering: ["p"], namespace: ["ns"], lifetime: ["60"], clusterwide: [true] },
    positionals: ["--not-a-flag"],
  });
});

test("a misspelt flag gets the closest known one, as kobun run's flags do", () => {
  expect(usageError(["--namespce", "x"]).message).toBe("unknown flag --namespce; did you mean --namespace?");
});

test("a switch given a value and a value flag given none are usage errors naming the flag", () => {
  expect(usageError(["--clusterwide=yes"]).message).toBe('--clusterwide takes no value, got "yes"');
  expect(usageError(["--peering"]).message).toBe("--peering needs a value (PEERING)");
  expect(usageError(["-n", "--clusterwide"]).message).toBe("-n needs a value (NAMESPACE)");
});
