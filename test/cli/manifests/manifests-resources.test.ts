// `kobun manifests` follows kobun.yaml's resources: a disabled resource gets no grants, the
// selectors RBAC cannot express are said in a comment, the entries reach `kobun run` through
// the carried ConfigMap, and a key no handler registers is the same error as at run time.

import { expect, test } from "bun:test";
import { parse, parseAllDocuments, stringify } from "yaml";
import { ConfigError, parseConfigText, resolveSettings } from "../../../src/config/index.ts";
import { renderManifests } from "../../../src/cli/manifests/manifests.ts";

const selectors = ["v1/configmaps", "v1/secrets"];

function render(yaml: string): string {
  const settings = resolveSettings({ file: "kobun.yaml", fileData: parseConfigText(`namespaces: { include: [apps] }\n${yaml}`, "kobun.yaml") });
  return renderManifests({ name: "op", namespace: "ops", image: "example/op:1", settings, selectors, manifests: [] });
}

const granted = (text: string) => parseAllDocuments(text).map((d) => d.toJS())
  .filter((d) => d.kind === "Role" || d.kind === "ClusterRole")
  .flatMap((d) => d.rules.flatMap((r: { resources: string[] }) => r.resources));

test("a resource with enabled: false gets no grants; the others keep theirs", () => {
  expect(granted(render(""))).toContain("secrets");
  const text = render("resources:\n  v1/secrets: { enabled: false }");
  expect(granted(text)).not.toContain("secrets");
  expect(granted(text)).toContain("configmaps");
});

test("selectors RBAC cannot express are said in a comment before the manifests", () => {
  const text = render("resources:\n  v1/configmaps: { labelSelector: app=web, fieldSelector: metadata.name!=x }");
  expect(text.split("\n").slice(0, 3)).toEqual([
    "# kobun.yaml's resources: the operator lists and watches these only through selectors, which RBAC cannot express:",
    "# the roles below grant every object of them.",
    "#   v1/configmaps: labelSelector app=web, fieldSelector metadata.name!=x",
  ]);
  expect(render("").startsWith("#")).toBe(false);
});

test("the entries reach kobun run through the carried ConfigMap, and read back the same", () => {
  const text = render("resources:\n  v1/configmaps: { labelSelector: app=web, workers: { limit: 3 } }");
  const configMap = parseAllDocuments(text).map((d) => d.toJS()).find((d) => d.kind === "ConfigMap");
  const carried = parse(configMap.data["kobun.yaml"]);
  expect(carried.resources).toEqual({ "v1/configmaps": { labelSelector: "app=web", workers: { limit: 3 }, enabled: true, storage: "auto" } });
  expect(resolveSettings({ fileData: carried }).resources["v1/configmaps"]?.labelSelector).toBe("app=web");
});

test("a key no handler registers is an error naming the file and line", () => {
  expect(() => render("resources:\n  v1/configmap: {}")).toThrow(ConfigError);
  expect(() => render("resources:\n  v1/configmap: {}")).toThrow('kobun.yaml:3: resources.v1/configmap: no handler registers this resource; did you mean "v1/configmaps"? (registered: v1/configmaps, v1/secrets)');
});

test("a key in any kubectl form naming one registered resource is its entry; one naming two, or a second entry, is an error", () => {
  const crd = {
    apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata: { name: "kobunexamples.kobun.dev" },
    spec: { group: "kobun.dev", names: { plural: "kobunexamples", singular: "kobunexample", kind: "KobunExample", shortNames: ["kex"] } },
  };
  const withCrd = (yaml: string) => {
    const settings = resolveSettings({ file: "kobun.yaml", fileData: parseConfigText(`namespaces: { include: [apps] }\n${yaml}`, "kobun.yaml") });
    return renderManifests({
      name: "op", namespace: "ops", image: "example/op:1", settings, selectors: [...selectors, "kobunexamples.kobun.dev/v1"],
      manifests: [{ name: "crds/kobunexamples.yaml", text: stringify(crd) }],
    });
  };
  for (const key of ["kobunexamples.kobun.dev", "KobunExample", "kex", "kobunexamples.v1.kobun.dev"]) {
    expect(granted(withCrd(`resources:\n  ${key}: { enabled: false }`))).not.toContain("kobunexamples");
  }
  expect(granted(withCrd(""))).toContain("kobunexamples");
  expect(granted(withCrd("resources:\n  secrets: { enabled: false }"))).not.toContain("secrets");
  expect(() => withCrd("resources:\n  kex: {}\n  KobunExample: {}")).toThrow(
    "kobun.yaml:4: resources.KobunExample: kobunexamples.kobun.dev/v1 has an entry under resources.kex already",
  );
});
