// Issue 33 end to end, on each target: on.startup retried as Kopf's 13-hooks does (TemporaryError
// three times, then success), no watch opened meanwhile; the operator then becomes ready (onReady,
// after the initial LIST), and an object created after that arrives as added; a startup handler out
// of retries stops run() with exit code 6. In-process run() against the target, in its own namespace.
//
//   cd test/e2e && KOBUN_E2E_TARGET=cluster bun test ./startup-retries.e2e.ts

import { describe, expect, test } from "bun:test";
import { resolveSettings } from "../../src/config/index.ts";
import { Registry } from "../../src/declaring/registry.ts";
import { TemporaryError } from "../../src/declaring/errors.ts";
import { KubeClient } from "../../src/kube/client.ts";
import { FatalError } from "../../src/runtime/exits.ts";
import { run } from "../../src/runtime/operator.ts";
import { Logger, memorySink } from "../../src/util/log.ts";
import { createNamespace } from "./harness/kube.ts";
import { targetSuite } from "./harness/suite.ts";
import { selectedTargets, type TargetName } from "./harness/target.ts";

/** `promise`, or an error naming `what` after `ms`. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms)));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

describe.each(selectedTargets())("on.startup retries against %s", (targetName: TargetName) => {
  const need = targetSuite(targetName, { crds: [], cleanup: [] });

  test("a startup handler retried three times (TemporaryError) lets the operator start; it is ready after the LIST; out of retries it exits 6", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-startup");
    const CONFIGMAPS = await t.client.resolve("v1/configmaps");
    await t.client.create(CONFIGMAPS, ns, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "before", labels: { e2e: "startup" } } });
    const registry = new Registry();
    const attempts: number[] = [];
    let watchedDuringStartup = false;
    registry.on.startup(function startupRetried({ retry }) {
      attempts.push(retry);
      if (retry < 3) throw new TemporaryError(`going to succeed in ${3 - retry} attempts`, { delay: 0.2 });
    });
    const seen: string[] = [];
    const added = Promise.withResolvers<void>();
    registry.on.event("v1/configmaps", ({ name, type }) => {
      if (attempts.length < 4) watchedDuringStartup = true;
      seen.push(`${type} ${name}`);
      if (name === "after") added.resolve();
    }, { id: "watch", labels: { e2e: "startup" } });
    const sink = memorySink("info");
    const client = await KubeClient.connect({ kubeconfig: t.kubeconfigPath });
    const settings = resolveSettings({ flags: { namespaces: [ns], standalone: true } });
    const stop = new AbortController();
    const ready = Promise.withResolvers<void>();
    const running = run({ signal: stop.signal, settings, client, registry, logger: new Logger(sink), onReady: () => ready.resolve() });
    try {
      const endedFirst = running.then(() => { throw new Error("the operator ended before it was ready"); });
      endedFirst.catch(() => {}); // read by the race only
      await Promise.race([ready.promise, endedFirst]);
      expect(attempts).toEqual([0, 1, 2, 3]);
      expect(watchedDuringStartup).toBe(false);
      expect(seen).toEqual(["listed before"]);
      await t.client.create(CONFIGMAPS, ns, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "after", labels: { e2e: "startup" } } });
      await within(added.promise, 30_000, "the created ConfigMap to arrive");
      expect(seen).toEqual(["listed before", "added after"]);
      expect(sink.lines.filter((l) => l.includes("Activity 'startupRetried' succeeded."))).toHaveLength(1);
    } finally {
      stop.abort();
      await running.catch(() => undefined);
    }

    const failing = new Registry();
    failing.on.startup(function sealed() { throw new TemporaryError("still sealed", { delay: 0.1 }); }, { retries: 2 });
    failing.on.event("v1/configmaps", () => {}, { id: "never" });
    const failure = await run({ settings, client, registry: failing, logger: new Logger(memorySink("error")) }).catch((error) => error);
    client.close();
    expect(failure).toBeInstanceOf(FatalError);
    expect(failure.exitCode).toBe(6);
    expect(failure.message).toBe("startup handler sealed failed: handler sealed failed 2 time(s): still sealed");
  }, 90_000);
});
