import { expect, test } from "bun:test";
import { memorySink } from "kobun";
import { KopfExamples } from "../../kopf.ts";
import { logged, logLine, sandboxWithCrd, startExample } from "../../testing.ts";
import { main, memo } from "../app.ts";
import { registry } from "../handlers/example.ts";

/** A plain log line's message: after the time and the level, before the object's fields. */
const message = (line: string) => line.replace(/^\S+ \S+ +/, "").replace(/ resource=.*$/, "");
const appOrHandler = /^(Starting the main app|Do the main app activity|Exiting the main app|Hello, |Good bye, )/;

test("12-embedded: an application runs the operator with its memo, works with it, and stops it", async () => {
  const sandbox = await sandboxWithCrd();
  try {
    const logs = memorySink("info");
    await main(sandbox.kubeconfigPath, logs, (message) => logs.until(logLine(message), { timeout: 10_000 }));
    expect(logs.lines.map(message).filter((said) => appOrHandler.test(said))).toEqual([
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

test("12-embedded: the handlers alone, with the memo given to startOperator", async () => {
  await using kit = await startExample(registry, { memo: { ...memo, createTemplate: "Hi, {name} in {namespace}!" } });
  await kit.apply(KopfExamples, { metadata: { name: "memo-test" }, spec: {} });
  await kit.logs.until(logLine("Hi, memo-test in default!"));
  await kit.delete(KopfExamples, "memo-test");
  await kit.gone(KopfExamples, "memo-test");
  expect(logged(kit.logs, "Good bye, memo-test!")).toHaveLength(1);
});
