// `kobun manifests` names its objects after the project's package name (issue 35).
// Issue 30: `kobun manifests` names a resource by its plural wherever the handlers named it by
// another name the API server accepts (short name, singular, kind): RBAC and webhook rules
// match the plural only, so a grant on "kex" would leave the operator forbidden to watch
// kobunexamples, and a webhook rule on "kex" would never be called. The CRDs shipped beside the
// handlers say the names (there is no API server to ask).

import { expect, spyOn, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { dispatch } from "../../../src/cli.ts";
import { projectName, renderManifests } from "../../../src/cli/manifests/manifests.ts";
import { KOBUN_ROOT } from "../../../src/cli/project/build.ts";
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
  // Three selectors, one resource: granted on the plural, in one rule with the verbs of all three.
  expect(granted).toEqual([
    { apiGroups: ["kobun.dev"], resources: ["kobunexamples"], verbs: ["get", "list", "watch", "patch"] },
    { apiGroups: ["kobun.dev"], resources: ["kobunexamples/status"], verbs: ["patch"] },
  ]);
  expect(role.rules.some((r: any) => r.resources.some((name: string) => /^(kex|kobunexample|KobunExample)\b/.test(name)))).toBe(false);
});

test("a webhook on a CRD's short name gets a rule on the CRD's group and plural", () => {
  const registry = new Registry();
  registry.on.validate("kex", () => {}, { id: "size" });
  const crd = parseAllDocuments(CRD_FILE.text)[0]!.toJS();
  const [, configuration] = webhookObjects("op", "ops", [crd], registry);
  expect((configuration as any).webhooks[0].rules).toEqual([{ operations: ["CREATE", "UPDATE"], apiGroups: ["kobun.dev"], apiVersions: ["*"], resources: ["kobunexamples"], scope: "Namespaced" }]);
});

test("without --name, everything is named after the project's package.json name, as a Kubernetes name", async () => {
  expect(projectName(join(KOBUN_ROOT, "scaffold"))).toBeUndefined(); // no package.json there
  const project = mkdtempSync(join(tmpdir(), "kobun-manifests-name-"));
  try {
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "@acme/Cron_Op" }));
    expect(projectName(project)).toBe("cron-op");
    const proc = Bun.spawn([process.execPath, join(KOBUN_ROOT, "src/cli.ts"), "manifests", "--standalone", join(KOBUN_ROOT, "handlers/example.ts")], {
      cwd: project, stdout: "pipe", stderr: "pipe", env: { PATH: process.env.PATH ?? "" },
    });
    const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    expect(code).toBe(0);
    const docs = parseAllDocuments(out).map((d) => d.toJS());
    const named = docs.filter((d) => ["ServiceAccount", "ClusterRole", "Role", "Deployment"].includes(d.kind));
    expect(named.length).toBeGreaterThan(1);
    for (const doc of named) expect([doc.kind, doc.metadata.name]).toEqual([doc.kind, "cron-op"]);
    const deployment = docs.find((d) => d.kind === "Deployment");
    expect(deployment.spec.template.spec.containers[0].image).toBe("cron-op:latest");
    expect(out).not.toContain("kobun-operator");
  } finally {
    rmSync(project, { recursive: true, force: true });
  }
}, 20_000);

test("--name and --operator-namespace that are no DNS labels are refused (exit 3, each named), not left to kubectl apply", async () => {
  const errors: string[] = [];
  const spy = spyOn(console, "error").mockImplementation((...args: unknown[]) => void errors.push(args.join(" ")));
  const write = spyOn(process.stdout, "write").mockImplementation(() => true);
  try {
    const argv = ["manifests", "--standalone", join(KOBUN_ROOT, "handlers/example.ts"), "--name", "My_Operator", "--operator-namespace", "Ops"];
    expect(await dispatch(argv, { handlersLoaded: false, manifests: [] })).toBe(3);
    expect(write).not.toHaveBeenCalled();
  } finally {
    spy.mockRestore();
    write.mockRestore();
  }
  expect(errors.join("\n")).toContain('--name: expected a DNS label (lowercase letters, digits and "-", starting and ending with a letter or digit, at most 63), got "My_Operator"');
  expect(errors.join("\n")).toContain('--operator-namespace: expected a DNS label');
  expect(errors.join("\n")).toContain('got "Ops"');
});
