// handlers.md: "Progress (`retry`, `started`) survives restarts, so a restarted operator continues
// the count"; a finished sub-handler "never runs again, ... after a restart". Two operators, one after the
// other, against one sandbox (testing.md's "Underneath": startSandbox + run()).

import { expect, test } from "bun:test";
import { Registry, TemporaryError } from "kobun";
import { startSandbox } from "kobun/sandbox";
import { operator, within } from "../docs-blackbox/helpers.ts";


async function createConfigMap(url: string, name: string): Promise<void> {
  const response = await fetch(`${url}/api/v1/namespaces/default/configmaps`, {
    method: "POST", headers: { "content-type": "application/json" },
    body: JSON.stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data: {} }),
  });
  expect(response.status).toBe(201);
}

type Seen = { metadata: { resourceVersion: string; annotations?: Record<string, string> } };

/** The ConfigMap once `test` holds for it: a GET, then a watch from its resourceVersion (no polling). */
async function untilObject(url: string, name: string, test: (o: Seen) => boolean): Promise<Seen> {
  const base = `${url}/api/v1/namespaces/default/configmaps`;
  const now = await (await fetch(`${base}/${name}`)).json() as Seen;
  if (test(now)) return now;
  const query = `watch=1&fieldSelector=metadata.name%3D${name}&resourceVersion=${now.metadata.resourceVersion}`;
  const reader = (await fetch(`${base}?${query}`)).body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the watch of ${name} ended first`);
    buffered += value;
    const lines = buffered.split("\n");
    buffered = lines.pop()!;
    for (const line of lines.filter(Boolean)) {
      const object = (JSON.parse(line) as { object: Seen }).object;
      if (!test(object)) continue;
      await reader.cancel();
      return object;
    }
  }
}

/** `scenario` against a sandbox of its own, stopped after it whatever happens. */
async function inSandbox(scenario: (sandbox: { url: string; kubeconfigPath: string }) => Promise<void>): Promise<void> {
  const sandbox = await startSandbox();
  try {
    await scenario(sandbox);
  } finally {
    await sandbox.stop();
  }
}

test("a retried handler's retry and started go on after a restart; its result lands once", () => inSandbox(retriedAcrossARestart), 45_000);

async function retriedAcrossARestart(sandbox: { url: string; kubeconfigPath: string }): Promise<void> {
  const seen: { retry: number; started: number }[] = [];
  const third = Promise.withResolvers<void>();
  const registry = new Registry();
  registry.on.create("v1/configmaps", ({ retry, started }) => {
    seen.push({ retry, started: started.getTime() });
    if (retry === 2) third.resolve();
    if (retry < 4) throw new TemporaryError("not yet", { delay: 0.2 });
    return { attempts: retry + 1 };
  }, { id: "slowly", retries: 10 });
  const first = operator(sandbox.kubeconfigPath, registry);
  await first.logs.until(/operator ready/, { timeout: 15_000 });
  await createConfigMap(sandbox.url, "r");
  await within(third.promise, 15_000, "the third attempt");
  await first.stop();
  const before = seen.length;
  const second = operator(sandbox.kubeconfigPath, registry);
  try {
    await second.logs.until(/Handler 'slowly' succeeded\./, { timeout: 15_000 });
  } finally {
    await second.stop();
  }
  const after = seen.slice(before);
  expect(after.at(-1)!.retry).toBe(4);
  expect(after[0]!.retry).toBeGreaterThanOrEqual(2);             // the count goes on (2 again: its write was cut)
  expect(new Set(seen.map((s) => s.started)).size).toBe(1);      // one first attempt for all of them
  const cm = await (await fetch(`${sandbox.url}/api/v1/namespaces/default/configmaps/r`)).json() as
    { metadata: { annotations?: Record<string, string> } };
  expect(Object.keys(cm.metadata.annotations ?? {}).filter((k) => k.includes("slowly"))).toEqual([]);
}

test("sub-handlers: a finished one is not run again after a restart; an unfinished one goes on", () => inSandbox(subhandlersAcrossARestart), 45_000);

async function subhandlersAcrossARestart(sandbox: { url: string; kubeconfigPath: string }): Promise<void> {
  const calls: string[] = [];
  const failedOnce = Promise.withResolvers<void>();
  const registry = new Registry();
  registry.on.create("v1/configmaps", ({ subhandler }) => {
    calls.push("parent");
    subhandler("a", () => { calls.push("a"); });
    subhandler("b", ({ retry }) => {
      calls.push(`b${retry}`);
      if (retry === 0) failedOnce.resolve();
      if (retry < 2) throw new TemporaryError("not yet", { delay: 0.5 });
    });
    return { done: true };
  }, { id: "steps" });
  const first = operator(sandbox.kubeconfigPath, registry);
  await first.logs.until(/operator ready/, { timeout: 15_000 });
  await createConfigMap(sandbox.url, "s");
  await within(failedOnce.promise, 15_000, "b's first failure");
  const recorded = (o: Seen) => JSON.parse(o.metadata.annotations?.["kobun.dev/steps.b"] ?? "{}").retries === 1;
  await within(untilObject(sandbox.url, "s", recorded), 15_000, "b's record of one failure on the object");
  await first.stop();
  const before = calls.length;
  const second = operator(sandbox.kubeconfigPath, registry);
  try {
    await second.logs.until(/Handler 'steps' succeeded\./, { timeout: 15_000 });
  } finally {
    await second.stop();
  }
  const after = calls.slice(before);
  expect(calls.slice(0, 3)).toEqual(["parent", "a", "b0"]);
  expect(after).not.toContain("a");
  expect(after.at(-1)).toBe("b2");
  expect(after.filter((c) => c === "b0")).toEqual([]);
}
