// startSandbox's options as a user mistypes them: each bad one is refused before a port opens, naming the option,
// what it got and what it takes. Before, `auth: "basic"` (or any word but "token") served an open sandbox, where
// anyone on 127.0.0.1 is system:masters; `historySize: -1` failed at its first write with a TypeError from inside;
// a misspelt option (`tsl: true`) was ignored.
import { expect, test } from "bun:test";
import { startSandbox, type SandboxOptions } from "../src/index.ts";

const refused: [string, Record<string, unknown>, string][] = [
  ["an auth that is neither open nor token", { auth: "basic" }, 'sandbox: auth is "open" or "token", got "basic"'],
  ["a historySize below 1", { historySize: -1 }, "sandbox: historySize is a whole number of events ≥ 1, got -1"],
  ["a bookmark interval that is no number", { bookmarkIntervalMs: "x" },
    'sandbox: bookmarkIntervalMs is a number of ms > 0, got "x"'],
  ["tls that is no boolean", { tls: "yes" }, 'sandbox: tls is true or false, got "yes"'],
  ["an empty token", { token: "" }, 'sandbox: token is a non-empty string, got ""'],
  ["a misspelt option", { tsl: true }, "sandbox: no option tsl (options: tls, token, auth, clientCA,"],
];

for (const [what, options, message] of refused) {
  test(`startSandbox refuses ${what}, saying what it takes`, async () => {
    const outcome = await startSandbox(options as SandboxOptions)
      .then(async (sandbox) => (await sandbox.stop(), "started"), (error: Error) => error.message);
    expect(outcome).toStartWith(message);
  });
}
