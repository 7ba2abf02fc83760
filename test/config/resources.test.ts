// The `resources:` section: every key read as given (absent keys inherit), every bad value
// and every unparsable selector reported with the file, the line of the key and
// the key path, before anything starts.

import { describe, expect, test } from "bun:test";
import { ConfigError, parseConfigText, resolveSettings } from "../../src/config/index.ts";

function resolveText(text: string) {
  return resolveSettings({ file: "kobun.yaml", fileData: parseConfigText(text, "kobun.yaml") });
}

function problems(text: string): string[] {
  try {
    resolveText(text);
  } catch (error) {
    if (error instanceof ConfigError) return error.issues.map((issue) => issue.line);
    throw error;
  }
  throw new Error("expected a ConfigError");
}

describe("resources: keys read as given", () => {
  test("no resources section: an empty mapping", () => {
    expect(resolveSettings({}).resources).toEqual({});
  });

  test("every key of an entry is kept with its typed value; absent keys stay absent (inherit)", () => {
    const settings = resolveText([
      "workers:", "  limit: 7",
      "resources:",
      "  kobunexamples.kobun.dev:",
      "    namespaces: { include: [\"team-*\", \"!team-x\"], exclude: [kube-system] }",
      "    clusterScoped: false",
      "    labelSelector: \"app=web,tier in (a,b),!legacy\"",
      "    fieldSelector: metadata.name!=skip",
      "    version: v1beta1",
      "    enabled: false",
      "    workers: { limit: 3, batchWindow: 250ms }",
      "    handling: { retries: null, backoff: 5s, timeout: 1m }",
      "    metadataOnly: true",
      "    storage: annotations",
      "  pods: {}",
    ].join("\n"));
    expect(settings.resources["kobunexamples.kobun.dev"]).toEqual({
      key: "kobunexamples.kobun.dev", file: "kobun.yaml", line: 4,
      namespaces: { include: ["team-*", "!team-x"], exclude: ["kube-system"] }, clusterScoped: false,
      labelSelector: "app=web,tier in (a,b),!legacy", fieldSelector: "metadata.name!=skip", version: "v1beta1",
      enabled: false, workers: { limit: 3, batchWindow: 0.25 }, handling: { retries: null, backoff: 5, timeout: 60 },
      metadataOnly: true, storage: "annotations",
    });
    expect(settings.resources.pods).toEqual({ key: "pods", file: "kobun.yaml", line: 15, enabled: true, storage: "auto" });
    expect(settings.workers.limit).toBe(7);
  });

  test("settings from fileData not parsed from text have no lines", () => {
    const settings = resolveSettings({ fileData: { resources: { pods: { enabled: false } } } });
    expect(settings.resources.pods).toEqual({ key: "pods", file: "config", enabled: false, storage: "auto" });
  });
});

describe("resources: errors", () => {
  test("resources that is not a mapping", () => {
    expect(problems("resources: [pods]")).toEqual(["kobun.yaml:1: resources: expected a mapping of resource selectors (like kobunexamples.kobun.dev) to their settings; got a list"]);
  });

  test("an entry that is not a mapping names the file and the key's line", () => {
    expect(problems("resources:\n  pods: yes")).toEqual(["kobun.yaml:2: resources.pods: expected a mapping with keys namespaces, clusterScoped, labelSelector, fieldSelector, version, enabled, workers, handling, reconcile, metadataOnly, storage; got \"yes\""]);
  });

  test("an unknown key inside an entry, with did-you-mean", () => {
    expect(problems("resources:\n  pods:\n    labelSelecter: a=b")[0]).toStartWith('kobun.yaml:3: resources.pods.labelSelecter: unknown key; did you mean "labelSelector"?');
  });

  test("bad values of every typed key", () => {
    const lines = problems([
      "resources:",
      "  pods:",
      "    namespaces: { include: [\"Bad_NS\"], exclude: [\"!x\"] }",
      "    clusterScoped: maybe",
      "    version: 1.0",
      "    enabled: \"no\"",
      "    workers: { limit: 0, batchWindow: forever }",
      "    handling: { retries: -1, backoff: 2 days, timeout: 0 }",
      "    metadataOnly: 1",
      "    storage: etcd",
    ].join("\n"));
    const paths = lines.map((line) => line.split(": ")[1]);
    expect(paths).toEqual([
      "resources.pods.namespaces.include[0]", "resources.pods.namespaces.exclude[0]", "resources.pods.clusterScoped", "resources.pods.version",
      "resources.pods.enabled", "resources.pods.workers.limit", "resources.pods.workers.batchWindow", "resources.pods.handling.retries",
      "resources.pods.handling.backoff", "resources.pods.handling.timeout", "resources.pods.metadataOnly", "resources.pods.storage",
    ]);
    expect(lines.map((line) => line.split(": ")[0])).toEqual([3, 3, 4, 5, 6, 7, 7, 8, 8, 8, 9, 10].map((n) => `kobun.yaml:${n}`));
    expect(lines[3]).toBe('kobun.yaml:5: resources.pods.version: expected an API version like "v1" or "v1beta1", got 1');
    expect(lines[11]).toBe('kobun.yaml:10: resources.pods.storage: expected one of "auto", "status", "annotations", got "etcd"');
  });

  test.each([
    ["app in ()", '"app in ()": "in" needs at least one value'],
    ["app=web,", "an empty requirement (a stray comma)"],
    ["app==we b", '"app==we b": expected key, !key, key=value, key!=value, key in (values) or key notin (values)'],
    ["-app=web", '"-app=web": "-app" is not a label key'],
    ["app=-web", '"app=-web": "-web" is not a label value'],
    ["replicas > two", '"replicas > two": ">" compares with an integer'],
  ])("a label selector that does not parse: %p", (selector, problem) => {
    const [line] = problems(`resources:\n  pods:\n    labelSelector: ${JSON.stringify(selector)}`);
    expect(line).toStartWith(`kobun.yaml:3: resources.pods.labelSelector: cannot parse the selector ${JSON.stringify(selector)}: ${problem}`);
  });

  test.each([
    ["app in (a, b),tier notin (x),!legacy,env,x.io/k=v,v!=w,n>3"],
    ["kobun.dev/role==primary"],
  ])("label selectors the API server accepts parse: %p", (selector) => {
    expect(resolveText(`resources:\n  pods:\n    labelSelector: ${JSON.stringify(selector)}`).resources.pods?.labelSelector).toBe(selector);
  });

  test.each([
    ["metadata.name", '"metadata.name": expected field=value, field==value or field!=value'],
    ["metadata..name=x", '"metadata..name=x": "metadata..name" is not a field path like metadata.name'],
    ["metadata.name=x,,status.phase=Running", "an empty requirement (a stray comma)"],
  ])("a field selector that does not parse: %p", (selector, problem) => {
    const [line] = problems(`resources:\n  pods:\n    fieldSelector: ${JSON.stringify(selector)}`);
    expect(line).toBe(`kobun.yaml:3: resources.pods.fieldSelector: cannot parse the selector ${JSON.stringify(selector)}: ${problem}`);
  });

  test("every problem of every entry is reported at once, each at its own key's line (not its resource's)", () => {
    const lines = problems("resources:\n  pods:\n    storage: x\n  configmaps:\n    version: one");
    expect(lines.map((line) => line.split(": ")[0])).toEqual(["kobun.yaml:3", "kobun.yaml:5"]);
  });
});
