// Every problem of a YAML file names the line of the key it is about (file:line: path: ...), so a
// user goes straight to it; YAML's merge keys (`<<: *defaults`) merge, as in kubectl's YAML.

import { describe, expect, test } from "bun:test";
import { ConfigError, parseConfigText, resolveSettings } from "../../src/config/index.ts";

function problems(text: string): string[] {
  try {
    resolveSettings({ file: "kobun.yaml", fileData: parseConfigText(text, "kobun.yaml") });
  } catch (error) {
    if (error instanceof ConfigError) return error.issues.map((issue) => issue.line);
    throw error;
  }
  throw new Error("expected a ConfigError");
}

describe("problems name their line", () => {
  test("an unknown key, at any depth, with its line and a did-you-mean", () => {
    const lines = problems("logging:\n  level: info\npeerin:\n  name: x\nworkers:\n  limt: 3\n");
    expect(lines[0]).toStartWith('kobun.yaml:3: peerin: unknown key; did you mean "peering"?');
    expect(lines[1]).toStartWith('kobun.yaml:6: workers.limt: unknown key; did you mean "limit"?');
  });

  test("a bad value at its key's line; one inside a list at the entry's line", () => {
    const lines = problems("shutdown:\n  gracePeriod: 5 minutes\nnamespaces:\n  include:\n    - team-a\n    - Team_B\n");
    expect(lines).toEqual([
      expect.stringMatching(/^kobun\.yaml:6: namespaces\.include\[1\]: expected a namespace name or glob/),
      'kobun.yaml:2: shutdown.gracePeriod: expected a duration like "30s", "5m", "1h30m", "250ms" or a number of ' +
        'seconds, got "5 minutes"',
    ]);
  });

  test("a problem between two keys is at the line of the key it names", () => {
    const lines = problems("peering:\n  lease:\n    duration: 15s\n    renewDeadline: 20s\n");
    expect(lines).toEqual([
      "kobun.yaml:4: peering.lease.renewDeadline: expected less than peering.lease.duration (15s), got 20s",
    ]);
  });

  test("inside resources: the bad key's own line, not only its resource's", () => {
    const lines = problems("resources:\n  pods:\n    labelSelector: a=b\n    wokers: { limit: 3 }\n    storage: etcd\n");
    expect(lines.map((line) => line.split(": ").slice(0, 2).join(": "))).toEqual([
      "kobun.yaml:4: resources.pods.wokers", "kobun.yaml:5: resources.pods.storage",
    ]);
  });

  test("a key absent from the file (a default): its nearest given parent's line; none at all: no line", () => {
    expect(problems("\n\nsharding:\n  replicas: 30\n")[0])
      .toStartWith("kobun.yaml:3: sharding.shards: expected at least sharding.replicas (30)");
    expect(problems("[1, 2]")[0]).toStartWith("kobun.yaml: (top level): expected a mapping");
  });

  test("settings given as data, not text, have no lines to name", () => {
    expect(() => resolveSettings({ file: "kobun.yaml", fileData: { workers: { limt: 3 } } }))
      .toThrow(/^kobun\.yaml: workers\.limt: unknown key/);
  });
});

describe("anchors and merge keys", () => {
  test("a merge key merges the anchored mapping; the mapping's own keys win", () => {
    const text = [
      "resources:",
      "  pods: &shared",
      "    workers: { limit: 3 }",
      "    handling: { retries: 2 }",
      "  configmaps:",
      "    <<: *shared",
      "    handling: { retries: 7 }",
    ].join("\n");
    const { resources } = resolveSettings({ file: "kobun.yaml", fileData: parseConfigText(text, "kobun.yaml") });
    expect(resources.configmaps?.workers).toEqual({ limit: 3 });
    expect(resources.configmaps?.handling).toEqual({ retries: 7 });
    expect(resources.configmaps?.line).toBe(5);
  });

  test("a merged key that is wrong is reported at the merge's line", () => {
    const lines = problems("workers:\n  <<: { limt: 3 }\n  batchWindow: 1s\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toStartWith('kobun.yaml:1: workers.limt: unknown key; did you mean "limit"?');
  });
});
