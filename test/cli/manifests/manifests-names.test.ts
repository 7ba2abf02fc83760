// Issue 30: `kobun manifests` names a resource by its plural wherever the handlers named it by
// another name the API server accepts (short name, singular, kind): RBAC and webhook rules
// match the plural only, so a grant on "kex" would leave the operator forbidden to watch
// kobunexamples, and a webhook rule on "kex" would never be called. The CRDs shipped beside the
// handlers say the names (there is no API server to ask).

import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";
import { renderManifests } from "../../../src/cli/manifests/manifests.ts";
import { webhookObjects } from "../../../src/cli/manifests/webhooks.ts";
import { resolveSettings } from "../../../src/config/index.ts";
import { Registry } from "../../../src/declaring/registry.ts";

const CRD_FILE = { name: "kobunexample.crd.yaml", text: readFileSync(new URL("../../../handlers/kobunexample.crd.yaml", import.meta.url), "utf8") };

test("a handler on a CRD's short name, singular or kind is granted on the CRD's plural", () => {
  const registry = new Registry();
  registry.on.create("kex", () => {}, { id: "a" });
  registry.on.update("kobunexample.kobun.dev", () => {}, { id: "b" });
  registry.on.index("KobunExample", ({ name }) => ({ [name]: true }), { id: "c" });
  const text = renderManifests({
    name: "op", namespace: "ops", image: "op:1", settings: resolveSettings({ flags: { standalone: true, namespaces: ["team-a"] } }),
    selectors: registry.selectors(), watched: registry.watchedOnly(), children: registry.children(), manifests: [CRD_FILE],
  });
  const role = parseAllDocuments(text).map((d) => d.toJS()).find((d) => d.kind === "Role");
  const granted = role.rules.filter((r: any) => r.apiGroups.includes("kobun.dev"));
  // Three selectors, one resource: each granted on the plural (the index-only one without patch and /status).
  expect(granted.flatMap((r: any) => r.resources).sort()).toEqual(["kobunexamples", "kobunexamples", "kobunexamples", "kobunexamples/status", "kobunexamples/status"]);
  expect(role.rules.some((r: any) => r.resources.some((name: string) => /^(kex|kobunexample|KobunExample)\b/.test(name)))).toBe(false);
});

test("a webhook on a CRD's short name gets a rule on the CRD's group and plural", () => {
  const registry = new Registry();
  registry.on.validate("kex", () => {}, { id: "size" });
  const crd = parseAllDocuments(CRD_FILE.text)[0]!.toJS();
  const [, configuration] = webhookObjects("op", "ops", [crd], registry);
  expect((configuration as any).webhooks[0].rules).toEqual([{ operations: ["CREATE", "UPDATE"], apiGroups: ["kobun.dev"], apiVersions: ["*"], resources: ["kobunexamples"], scope: "Namespaced" }]);
});
