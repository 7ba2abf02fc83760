import { expect, test } from "bun:test";
import { resource } from "kobun";
import { logged, logLine, startExample } from "../../testing.ts";
import { killer, registry } from "../handlers/example.ts";

const pod = (name: string) => ({
  metadata: { name },
  spec: { containers: [{ name: "the-only-one", image: "busybox", command: ["sh", "-x", "-c", "sleep 1"] }] },
});

/** The messages the killing task logged about one Pod, in order. */
const killing = (lines: readonly string[], name: string) =>
  lines.filter((l) => l.includes(" === Pod killing ") && l.includes(` namespace=default name=${name} `))
    .map((l) => /(=== Pod killing .*?) resource=/.exec(l)![1]);

test("10-builtins: a Pod in sight is killed after the timeout; one deleted before has its killing cancelled", async () => {
  await using kit = await startExample(registry);

  killer.timeout = 0.3;
  await kit.apply(resource.pods, pod("doomed"));
  await kit.gone(resource.pods, "doomed"); // the operator deleted it (and its delete handler let it go)
  expect(killing(kit.logs.lines, "doomed")).toEqual(["=== Pod killing happens in 0.3s.", "=== Pod killing happens NOW!"]);
  expect(logged(kit.logs, "the Pod could not be deleted")).toEqual([]);

  killer.timeout = 30;
  await kit.apply(resource.pods, pod("spared"));
  await kit.logs.until(/=== Pod killing happens in 30s\. .* name=spared /);
  await kit.delete(resource.pods, "spared");
  await kit.gone(resource.pods, "spared");
  await kit.logs.until(logLine("=== Pod killing is cancelled!"));
  expect(killing(kit.logs.lines, "spared")).toEqual(["=== Pod killing happens in 30s.", "=== Pod killing is cancelled!"]);
}, 15_000);
