import { expect, test } from "bun:test";
import { join } from "node:path";
import { memorySink, Toggle } from "kobun";
import { sampleObject } from "../../kopf.ts";
import { examplesPath, logLine, logMessage, request, runOperator, sandboxWithCrd, untilToggle } from "../../testing.ts";
import { registry } from "../handlers/example.ts";

/** The peering resource's CRD, as `kobun manifests` prints it. */
const PEERING_CRD = join(import.meta.dir, "../../../../crds/peering-kobun.dev.yaml");

/**
 * One peering object for the cluster (Kopf's with -A): the toggle given to `run()` then shows the
 * freeze (a namespace's own peering freezes a gate of that namespace, which the toggle does not show).
 */
const PEERING = { peering: { clusterwide: true } };

test("06-peering: a developer's operator (--dev: priority 666) freezes the deployed one until it exits", async () => {
  await using sandbox = { ...(await sandboxWithCrd([PEERING_CRD])), async [Symbol.asyncDispose]() { await this.stop(); } };
  // Each operator's own log: which of them handled which object.
  const deployedLogs = memorySink("info");
  const devLogs = memorySink("info");
  const created = (logs: typeof devLogs) => logs.lines.map(logMessage).filter((m) => /^created (before|during|after)$/.test(m));
  const create = (name: string) =>
    request(sandbox, "POST", examplesPath(), { apiVersion: "kopf.dev/v1", kind: "KopfExample", ...sampleObject(name) });

  const deployedToggle = new Toggle();
  const deployed = await runOperator(sandbox, registry, {
    config: PEERING, flags: { standalone: false, priority: 0 }, toggle: deployedToggle, peerId: "deployed", logs: deployedLogs,
  });
  try {
    await create("before");
    await deployedLogs.until(logLine("created before"), { timeout: 10_000 });
    expect(deployedToggle.frozen).toBe(false);

    const devToggle = new Toggle();
    const dev = await runOperator(sandbox, registry, {
      config: PEERING, flags: { dev: true }, toggle: devToggle, peerId: "developer", logs: devLogs, // `kobun run --dev`
    });
    try {
      await untilToggle(deployedToggle, true);
      await untilToggle(devToggle, false); // an operator is frozen until its peering has looked at the peers
      await create("during"); // handled once, by the developer's operator: the deployed one is frozen
      await devLogs.until(logLine("created during"), { timeout: 10_000 });
    } finally {
      await dev.stop();
    }
    await untilToggle(deployedToggle, false); // the developer's exit removed its record: the deployed one resumes
    await create("after");
    await deployedLogs.until(logLine("created after"), { timeout: 10_000 });
    expect(created(deployedLogs)).toEqual(["created before", "created after"]);
    expect(created(devLogs)).toEqual(["created during"]);
  } finally {
    await deployed.stop();
  }
}, 20_000);
