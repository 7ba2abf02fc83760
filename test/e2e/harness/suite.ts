// The per-target frame of an e2e file: start the target and install the CRDs before its tests,
// stop every operator and the target after them. Inside `describe.each(selectedTargets())`.

import { afterAll, beforeAll } from "bun:test";
import type { Resource } from "../../../src/kube/types.ts";
import { cleanupNamespaces } from "./kube.ts";
import { killAllOperators } from "./operator.ts";
import { startTarget, type Target, type TargetName, type TargetOptions } from "./target.ts";

/**
 * Registers the hooks; returns `need()`, with which every test starts: the target, or a failure
 * that says why there is none. On a cluster the user named, the namespaces the file created are
 * deleted at the end, after the finalizers of `cleanup` resources' objects are stripped.
 */
export function targetSuite(targetName: TargetName, { cleanup, ...options }: { crds: string[]; cleanup: Resource[] } & TargetOptions): () => Target {
  let target: Target | undefined;
  let setupError: unknown;

  beforeAll(async () => {
    try {
      target = await startTarget(targetName, options);
    } catch (e) {
      setupError = e;
    }
  }, 120_000);

  afterAll(async () => {
    await killAllOperators();
    if (target && process.env.KOBUN_E2E_KUBECONFIG && targetName === "cluster") await cleanupNamespaces(target.client, cleanup);
    await target?.stop();
  }, 30_000);

  return () => {
    if (!target) {
      const why = setupError instanceof Error ? setupError.message : String(setupError);
      throw new Error(`e2e target "${targetName}" is not available: ${why}`);
    }
    return target;
  };
}
