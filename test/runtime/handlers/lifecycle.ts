// Handlers for the lifecycle tests: one that honours its abort signal, one that ignores it.
// They act on ConfigMaps labelled `lifecycle=polite|stubborn`, so no CRD is needed.
import { on } from "kobun";

on.create("v1/configmaps", async ({ signal, logger }) => {
  logger.info("polite handler started");
  await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
  logger.info("polite handler saw the abort");
}, { id: "polite", labels: { lifecycle: "polite" } });

on.create("v1/configmaps", async ({ logger }) => {
  logger.info("stubborn handler started");
  await Bun.sleep(60_000); // ignores its signal on purpose
}, { id: "stubborn", labels: { lifecycle: "stubborn" } });
