// startOperator's options as a user mistypes them: each bad one is refused before anything starts, with a
// message naming the option, what it got and what it takes (before, a bad `logLevel` kept no log line at all,
// a bad `timeout` started a kit whose every wait threw a RangeError, a typo'd option or flag was ignored, and a
// `crds` file that was no YAML, or held no CRD, was skipped: the test then failed later, on a missing resource).

import { afterAll, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Registry } from "kobun";
import { startOperator, type TestOperatorOptions } from "kobun/testing";

function configMaps(): Registry {
  const registry = new Registry();
  registry.on.create("v1/configmaps", ({ patch }) => { patch.metadata.labels = { seen: "yes" }; }, { id: "seen" });
  return registry;
}

/** The error startOperator rejects with (the kit stopped if it started after all). */
async function refusal(options: Record<string, unknown>): Promise<string> {
  const outcome = await startOperator({ registry: configMaps(), logLevel: "silent", ...options } as TestOperatorOptions)
    .then(async (kit) => (await kit.stop(), "started"), (error: Error) => error.message);
  return outcome;
}

const refused: [string, Record<string, unknown>, string][] = [
  ["a negative timeout", { timeout: -1 }, "startOperator({ timeout }): a positive number of ms, got -1"],
  ["a timeout as text", { timeout: "5s" }, "startOperator({ timeout }): a positive number of ms, got \"5s\""],
  ["a zero timeout", { timeout: 0 }, "startOperator({ timeout }): a positive number of ms, got 0"],
  ["an unknown logLevel", { logLevel: "verbose" },
    "startOperator({ logLevel }): \"debug\", \"info\", \"warn\", \"error\" or \"silent\", got \"verbose\""],
  ["an unknown logCapture", { logCapture: "silent" },
    "startOperator({ logCapture }): \"debug\", \"info\", \"warn\" or \"error\", got \"silent\""],
  ["crds as one path", { crds: "handlers/my.crd.yaml" },
    "startOperator({ crds }): a list of CRD file paths, got \"handlers/my.crd.yaml\""],
  ["a misspelt option", { timeoutMs: 100 }, "startOperator: no option timeoutMs: did you mean timeout? (options: namespace, crds, flags,"],
  ["a misspelt flag", { flags: { webhookUrl: "https://127.0.0.1:0" } },
    "startOperator({ flags }): no flag webhookUrl: did you mean webhooksUrl? (flags are kobun run's, in camelCase"],
  ["a flag that is no kobun run flag", { flags: { name: "x" } }, "startOperator({ flags }): no flag name (flags are"],
  ["the kit's own namespaces flag", { flags: { namespaces: ["other"] } },
    "startOperator({ flags }): namespaces is the kit's (it watches one namespace: give `namespace`"],
  ["peering by the dev flag", { flags: { dev: true } }, "startOperator({ flags }): dev is the kit's (it runs standalone"],
];

for (const [what, options, message] of refused) {
  test(`startOperator refuses ${what}, saying what it takes`, async () => {
    expect(await refusal(options)).toStartWith(message);
  }, 15_000);
}

test("a wait's own timeout that is no positive number of ms is refused at once, naming it", async () => {
  await using kit = await startOperator({ registry: configMaps(), logLevel: "silent" });
  const until = await kit.until("v1/configmaps", "c", () => true, { timeout: -5 }).catch((e: Error) => e.message);
  expect(until).toBe("until({ timeout }): a positive number of ms, got -5");
  const gone = await kit.gone("v1/configmaps", "c", { timeout: Number.NaN }).catch((e: Error) => e.message);
  expect(gone).toBe("gone({ timeout }): a positive number of ms, got NaN");
  const events = await kit.events({ kind: "ConfigMap", metadata: { name: "c" } }, { until: () => true, timeout: -1 })
    .catch((e: Error) => e.message);
  expect(events).toBe("events({ timeout }): a positive number of ms, got -1");
  const logs = await kit.logs.until(/never/, { timeout: -1 }).catch((e: Error) => e.message);
  expect(logs).toBe("logs.until({ timeout }): a positive number of ms, got -1");
}, 15_000);

const dir = mkdtempSync(join(tmpdir(), "kobun-kit-options-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("a crds file that is not YAML is refused, naming the file and where it breaks", async () => {
  const path = join(dir, "broken.crd.yaml");
  writeFileSync(path, "apiVersion: apiextensions.k8s.io/v1\nkind: [CustomResourceDefinition\n");
  const message = await refusal({ crds: [path] });
  expect(message).toStartWith(`startOperator({ crds }): ${path} is not YAML: `);
  expect(message).toContain("at line 3, column 1");
}, 15_000);

test("a crds file that holds no CustomResourceDefinition is refused, naming what it holds", async () => {
  const path = join(dir, "settings.yaml");
  writeFileSync(path, "apiVersion: v1\nkind: ConfigMap\nmetadata: { name: settings }\n");
  expect(await refusal({ crds: [path] })).toBe(
    `startOperator({ crds }): ${path} holds no CustomResourceDefinition (it holds ConfigMap settings); ` +
      "create other objects in the test, with kit.apply",
  );
}, 15_000);

test("crds may name a directory, as envtest's CRDDirectoryPaths: its CRD files are installed, others skipped", async () => {
  const bases = join(dir, "bases");
  mkdirSync(bases);
  copyFileSync(join(import.meta.dir, "../../handlers/kobunexample.crd.yaml"), join(bases, "kobunexample.crd.yaml"));
  writeFileSync(join(bases, "kustomization.yaml"), "resources:\n  - kobunexample.crd.yaml\n");
  await using kit = await startOperator({ registry: configMaps(), logLevel: "silent", crds: [bases] });
  const made = await kit.apply("kobunexamples.kobun.dev/v1", { metadata: { name: "one" }, spec: { size: 1 } });
  expect(made.kind).toBe("KobunExample");
}, 15_000);

test("a crds directory that holds no CRD file is refused, naming it", async () => {
  const empty = join(dir, "empty");
  mkdirSync(empty);
  writeFileSync(join(empty, "kustomization.yaml"), "resources: []\n");
  expect(await refusal({ crds: [empty] })).toBe(
    `startOperator({ crds }): the directory ${empty} holds no file with a CustomResourceDefinition ` +
      "(its .yaml, .yml and .json files are read, not its subdirectories)",
  );
}, 15_000);
