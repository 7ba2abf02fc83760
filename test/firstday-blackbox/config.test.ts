// docs/configuration.md and peering.md as a first-day author checks them: kobun.example.yaml
// loads as it is, every settings block the guides show loads, and a kobun.yaml mistake
// (unknown key or section, wrong type, bad duration or namespace, a resources: key naming no
// handled resource, a YAML error, a missing file) ends with exit 3 naming the file and the key.
// docs-blackbox/configuration.test.ts holds the basic cases (workers.bogus, logging.level).

import { afterAll, expect, test } from "bun:test";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { resolveSettings } from "kobun";
import { handlerModule, kobun, kubeconfigFile, root, scratchDir } from "./helpers.ts";

const dir = scratchDir();
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const closed = kubeconfigFile(dir, "closed.kubeconfig", "http://127.0.0.1:1");
const handlers = handlerModule(dir, "configmaps.ts", 'import { on } from "kobun";\non.create("v1/configmaps", () => {}, { id: "noop" });\n');

/** `kobun run` with `yaml` as its --config: the file is read before any connection is tried. */
async function runWith(name: string, yaml: string, extra: string[] = []): Promise<{ code: number; stderr: string; file: string }> {
  const file = join(dir, name);
  writeFileSync(file, yaml);
  const { code, stderr } = await kobun(["run", handlers, "--config", file, "--kubeconfig", closed, ...extra]);
  return { code, stderr, file };
}

test("kobun.example.yaml loads as it is: kobun manifests takes it; every settings block of the README and guides resolves", async () => {
  const manifests = await kobun(["manifests", handlers, "--config", join(root, "kobun.example.yaml"), "-n", "default"]);
  expect({ code: manifests.code, err: manifests.stderr }).toEqual({ code: 0, err: "" });
  expect(manifests.stdout).toContain("kind: Deployment");
  const pages = ["README.md", ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];
  const blocks = pages.flatMap((page) =>
    [...readFileSync(join(root, page), "utf8").matchAll(/```ya?ml\n([\s\S]*?)```/g)]
      .map((m, index) => ({ where: `${page} #${index + 1}`, yaml: m[1]! }))
      .filter(({ yaml }) => !/^(apiVersion|kind):/m.test(yaml)));   // Kubernetes objects, not kobun.yaml
  expect(blocks.length).toBeGreaterThanOrEqual(5);
  const failures = blocks.flatMap(({ where, yaml }) => {
    const file = join(dir, "block.yaml");
    writeFileSync(file, yaml);
    try {
      resolveSettings({ flags: { config: file }, env: {} });
      return [];
    } catch (error) {
      return [`${where}: ${(error as Error).message}`];
    }
  });
  expect(failures).toEqual([]);
}, 30_000);

test("a kobun.yaml with many mistakes: exit 3, each named by file, line and key (did-you-mean for a typo), none of the good keys", async () => {
  const { code, stderr, file } = await runWith("mistakes.yaml", [
    "peering: { nme: ops, priority: high }",
    "namespaces: { include: [default, Team_A] }",
    "shutdown: { gracePeriod: 5 minutes }",
    "watching: { backoff: 1d }",
    "handling: { retries: 0, timeout: 2h }",
    "metrix: { enabled: true }",
    "logging: { format: json }",
  ].join("\n") + "\n");
  expect(code).toBe(3);
  const problems = stderr.trimEnd().split("\n").slice(1).map((line) => line.trim());
  const expected = [
    `${file}:1: peering.nme: unknown key; did you mean "name"?`,
    `${file}:1: peering.priority: expected`,
    `${file}:2: namespaces.include[1]: expected a namespace name or glob`,
    `${file}:3: shutdown.gracePeriod: expected a duration like "30s", "5m", "1h30m", "250ms" or a number of seconds, got "5 minutes"`,
    `${file}:4: watching.backoff:`,
    `${file}:5: handling.retries: expected an integer of at least 1, or null (retry forever), got 0`,
    `${file}:6: metrix: unknown key; did you mean "metrics"?`,
  ];
  for (const start of expected) expect(problems.filter((line) => line.startsWith(start))).toHaveLength(1);
  expect(problems).toHaveLength(expected.length);   // logging: { format: json } is right, and not named
  expect(stderr.split("\n")[0]).toBe("kobun: invalid configuration:");
}, 30_000);

test("wrong shapes, a YAML error with its line, a missing file, a resources: key naming no handled resource, a --name no DNS label: exit 3, named", async () => {
  const [list, scalar, syntax, resources] = await Promise.all([
    runWith("list.yaml", "- peering\n- namespaces\n"),
    runWith("scalar.yaml", "namespaces: default\n"),
    runWith("syntax.yaml", "peering:\n  name: a\n   priority: 1\n"),
    runWith("resources.yaml", "namespaces: { include: [default] }\nresources:\n  widgets: { labelSelector: 'app=web' }\n"),
  ]);
  const missing = await kobun(["run", handlers, "--config", join(dir, "nowhere.yaml"), "--kubeconfig", closed]);
  const badName = await kobun(["manifests", handlers, "--name", "My_Operator"]);
  expect([list.code, scalar.code, syntax.code, resources.code, missing.code, badName.code]).toEqual([3, 3, 3, 3, 3, 3]);
  expect(badName.stderr).toContain('--name: expected a DNS label');
  expect(badName.stdout).toBe("");
  expect(list.stderr).toContain(`${list.file}: (top level): expected a mapping with keys peering, namespaces,`);
  expect(scalar.stderr).toContain(`${scalar.file}:1: namespaces: expected a mapping with keys include, exclude, allNamespaces; got "default"`);
  expect(syntax.stderr).toContain(`${syntax.file}:2:9: YAML syntax error`);   // where the bad nesting starts
  expect(resources.stderr).toContain(`${resources.file}:3: resources.widgets: no handler registers this resource (registered: v1/configmaps)`);
  expect(missing.stderr).toContain(`${join(dir, "nowhere.yaml")}: config file not found`);
}, 30_000);

test("peering.md's rules: lease timings that leave no room to stop, sharding with a lease, --dev with --priority or --standalone", async () => {
  const [lease, shardedLease, devPriority, devStandalone, replicas] = await Promise.all([
    runWith("lease.yaml", "peering: { mode: lease, lease: { duration: 10s, renewDeadline: 9s } }\n"),
    runWith("sharded-lease.yaml", "peering: { mode: lease }\nsharding: { replicas: 2 }\n"),
    kobun(["run", handlers, "--kubeconfig", closed, "--dev", "--priority", "5"]),
    kobun(["run", handlers, "--kubeconfig", closed, "--dev", "--standalone"]),
    kobun(["run", handlers, "--kubeconfig", closed, "--replicas", "0"]),
  ]);
  expect(lease.code).toBe(3);
  expect(lease.stderr).toContain(`${lease.file}:1: peering.freezeGracePeriod: expected less than peering.lease.duration - peering.lease.renewDeadline (1s)`);
  expect(shardedLease.code).toBe(3);
  expect(shardedLease.stderr).toContain(`${shardedLease.file}:2: sharding.replicas: sharding cannot be combined with peering.mode "lease"`);
  expect([devPriority.code, devStandalone.code]).toEqual([2, 2]);
  expect(devPriority.stderr).toContain("--dev sets the peering priority to 666: give --dev or --priority, not both");
  expect(devStandalone.stderr).toContain("--standalone does not peer");
  expect(replicas.code).toBe(3);
  expect(replicas.stderr).toContain('--replicas: expected "auto" or an integer from 1 to 1000, got "0"');
}, 30_000);
