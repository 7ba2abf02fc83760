import { expect, test } from "bun:test";
import { sandboxWithCrd } from "../../testing.ts";
import { main } from "../app.ts";
import { journal } from "../handlers/example.ts";

test("12-embedded: an application runs the operator, works with it, and stops it", async () => {
  const sandbox = await sandboxWithCrd();
  try {
    journal.clear();
    await main(sandbox.kubeconfigPath);
    expect(journal.lines).toEqual([
      "Starting the main app.",
      ...[0, 1, 2].flatMap((step) => [
        `Do the main app activity here. Step ${step + 1}/3.`, `Hello, kopf-example-${step}!`, `Good bye, kopf-example-${step}!`,
      ]),
      "Exiting the main app.",
    ]);
  } finally {
    await sandbox.stop();
  }
});
