// `kobun freeze` / `kobun resume` as a first-day user mistypes them (README "Exit codes": 2 bad usage, 3 a flag
// value that fails validation, 4 no usable kubeconfig): the command line is judged before any connection, its values
// as `kobun run` judges the same flags; and `-n` repeated, as Kopf's `kopf freeze -n a -n b`, freezes each namespace.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { startSandbox, type Sandbox } from "kobun/sandbox";
import { kobun, root } from "./helpers.ts";

let sandbox: Sandbox;
const post = (path: string, body: unknown) => fetch(`${sandbox.url}${path}`,
  { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
beforeAll(async () => {
  sandbox = await startSandbox();
  const crds = Bun.YAML.parse(await Bun.file(join(root, "crds", "peering-kobun.dev.yaml")).text()) as unknown[];
  for (const crd of crds) expect((await post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)).status).toBe(201);
  for (const name of ["fz-a", "fz-b"]) expect((await post("/api/v1/namespaces", { metadata: { name } })).status).toBe(201);
});
afterAll(() => sandbox?.stop());

test("no kubeconfig anywhere: a usage error is 2 and a bad value 3 (every one named), never 4 for the missing cluster", async () => {
  const [noLifetime, both, values, run] = await Promise.all([
    kobun(["freeze", "-n", "default"]),
    kobun(["freeze", "-n", "default", "--lifetime", "60", "--dev", "--priority", "5"]),
    kobun(["freeze", "-n", "Team_A", "--lifetime", "10m", "--priority", "1.5", "--peering", "Ops"]),
    kobun(["run", "-n", "default", "--priority", "1.5"]),
  ]);
  expect([noLifetime.code, both.code, values.code]).toEqual([2, 2, 3]);
  expect(noLifetime.stderr).toContain("kobun freeze needs --lifetime SECONDS");
  expect(both.stderr).toContain("give --dev or --priority, not both");
  expect(values.stderr.trimEnd().split("\n")).toEqual([
    "kobun: invalid configuration:",
    '  --namespace: expected a namespace name (a DNS label), got "Team_A"',
    '  --peering: expected a Kubernetes object name (lowercase letters, digits, "-" and "."), got "Ops"',
    '  --priority: expected an integer, got "1.5"',
    '  --lifetime: expected a whole number of seconds, at least 1, got "10m"',
  ]);
  // The same exit as `kobun run --priority 1.5`: one rule for a flag's value, whichever command takes it.
  expect(run.code).toBe(3);
  for (const r of [noLifetime, both, values]) expect(r.stderr).not.toContain("cannot connect");
}, 30_000);

test("-n repeated: each namespace's peering object gets the record, and resume -n ... removes each", async () => {
  const connection = ["--kubeconfig", sandbox.kubeconfigPath, "--peering", "fz"];
  const statusIn = async (ns: string) =>
    (await (await fetch(`${sandbox.url}/apis/kobun.dev/v1/namespaces/${ns}/kobunpeerings/fz`)).json() as any).status ?? {};
  const frozen = await kobun(["freeze", "-n", "fz-a", "-n", "fz-b", "--lifetime", "60", ...connection]);
  expect({ code: frozen.code, out: frozen.stdout.trim().split("\n") })
    .toEqual({ code: 0, out: ["frozen: peering fz for 60s in fz-a", "frozen: peering fz for 60s in fz-b"] });
  for (const ns of ["fz-a", "fz-b"]) {
    expect(Object.values(await statusIn(ns))).toEqual([expect.objectContaining({ priority: 100, lifetime: 60 })]);
  }
  const resumed = await kobun(["resume", "-n", "fz-a", "-n", "fz-b", ...connection]);
  expect(resumed.code).toBe(0);
  expect([await statusIn("fz-a"), await statusIn("fz-b")]).toEqual([{}, {}]);
}, 30_000);
