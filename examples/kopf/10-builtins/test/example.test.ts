import { expect, test } from "bun:test";
import { resource } from "kobun";
import { startExample } from "../../testing.ts";
import { journal, killer, registry } from "../handlers/example.ts";

const pod = (name: string) => ({
  metadata: { name },
  spec: { containers: [{ name: "the-only-one", image: "busybox", command: ["sh", "-x", "-c", "sleep 1"] }] },
});

test("10-builtins: a Pod in sight is killed after the timeout; one deleted before has its killing cancelled", async () => {
  journal.clear();
  await using kit = await startExample(registry);

  killer.timeout = 0.3;
  await kit.apply(resource.pods, pod("doomed"));
  await kit.gone(resource.pods, "doomed"); // the operator deleted it (and its delete handler let it go)
  expect(journal.lines).toEqual([
    "[default/doomed] === Pod killing happens in 0.3s.", "[default/doomed] === Pod killing happens NOW!",
  ]);

  journal.clear();
  killer.timeout = 30;
  await kit.apply(resource.pods, pod("spared"));
  await journal.has("[default/spared] === Pod killing happens in 30s.");
  await kit.delete(resource.pods, "spared");
  await kit.gone(resource.pods, "spared");
  await journal.has("[default/spared] === Pod killing is cancelled!");
}, 15_000);
