import { expect, test } from "bun:test";
import { startOperator } from "kobun/testing";
import { Claims, registry } from "../handlers/ephemeral.ts";

const PVCS = "v1/persistentvolumeclaims";

test("evc: a claim makes its PVC, resizes and relabels it, and takes it along when deleted", async () => {
  await using kit = await startOperator({ registry, logLevel: "silent", timeout: 10_000 });
  await kit.apply(Claims, { metadata: { name: "my-claim", labels: { application: "some-app" } }, spec: { size: "1G" } });
  const made = await kit.until(Claims, "my-claim", (o) => o.status?.create_fn);
  expect(made.status?.create_fn).toEqual({ "pvc-name": "my-claim" });
  const pvc = await kit.until(PVCS, "my-claim", (o) => o);
  expect(pvc.spec?.resources?.requests?.storage).toBe("1G");
  expect(pvc.metadata.labels).toEqual({ application: "some-app" });
  expect(pvc.metadata.ownerReferences?.[0]?.uid).toBe(made.metadata.uid);

  await kit.apply(Claims, { metadata: { name: "my-claim", labels: { owner: "me" } }, spec: { size: "2G" } });
  const changed = await kit.until(PVCS, "my-claim", (o) => o.spec?.resources?.requests?.storage === "2G"
    && o.metadata.labels?.owner === "me" && o.metadata.labels?.application === undefined);
  expect(changed.metadata.labels).toEqual({ owner: "me" });

  await kit.delete(Claims, "my-claim");
  await kit.gone(Claims, "my-claim");
  await kit.gone(PVCS, "my-claim"); // garbage-collected with its owner
});

test("evc: a claim without a size fails for good, with the reason on the object", async () => {
  await using kit = await startOperator({ registry, logLevel: "silent", timeout: 10_000 });
  await kit.apply(Claims, { metadata: { name: "no-size" }, spec: {} });
  const failed = await kit.until(Claims, "no-size", (o) => JSON.stringify(o.status ?? {}).includes("Size must be set"));
  expect(JSON.stringify(failed.status)).toContain("Size must be set. Got undefined.");
  expect(await kit.get(PVCS, "no-size")).toBeUndefined();
});

test("evc: the first label of a claim that had none reaches its PVC, and removing them all clears the PVC's", async () => {
  // The field goes from absent to present (and back): one diff item for the whole field, path [].
  await using kit = await startOperator({ registry, logLevel: "silent", timeout: 10_000 });
  await kit.apply(Claims, { metadata: { name: "bare" }, spec: { size: "1G" } });
  await kit.until(Claims, "bare", (o) => o.status?.create_fn);
  await kit.apply(Claims, { metadata: { name: "bare", labels: { app: "x" } }, spec: { size: "1G" } });
  const labelled = await kit.until(PVCS, "bare", (o) => o.metadata.labels?.app === "x");
  expect(labelled.metadata.labels).toEqual({ app: "x" });
  await kit.apply(Claims, { metadata: { name: "bare" }, spec: { size: "1G" } }); // server-side apply: the label goes
  const cleared = await kit.until(PVCS, "bare", (o) => Object.keys(o.metadata.labels ?? {}).length === 0);
  expect(cleared.metadata.labels ?? {}).toEqual({});
}, 30_000);
