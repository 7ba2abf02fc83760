// Regenerates src/sandbox/kube-openapi.json.gz: the OpenAPI v3 schemas of the built-in kinds the
// sandbox serves (what `kubectl explain` reads), taken from api/openapi-spec/v3 of the
// k8s.io/kubernetes module that test/cluster/go.mod pins (kube-apiserver's own), pruned to the
// schemas reachable from those kinds, gzipped.
//
//   bun test/cluster/gen-openapi.ts          # after test/cluster/build.sh (or `go mod download`)

import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { ResourceRegistry } from "../../src/sandbox/resources.ts";

const here = import.meta.dir;
const out = resolve(here, "../../src/sandbox/kube-openapi.json.gz");
const go = process.env.GO ?? (spawnSync("which", ["go"]).status === 0 ? "go" : "/usr/local/go/bin/go");
const r = spawnSync(go, ["list", "-m", "-f", "{{.Dir}}", "k8s.io/kubernetes"], { cwd: here, encoding: "utf8" });
if (r.status !== 0) throw new Error(`go list -m k8s.io/kubernetes failed (run test/cluster/build.sh first): ${r.stderr}`);
const specDir = join(r.stdout.trim(), "api/openapi-spec/v3");

const schemas: Record<string, any> = {};
const groupVersions: Record<string, { kinds: Record<string, string>; closure: string[] }> = {};
const builtins = new ResourceRegistry().all().filter((d) => !d.crdName);
for (const gv of new Set(builtins.map((d) => `${d.group}/${d.versions[0]}`))) {
  const [group, version] = gv.split("/") as [string, string];
  const key = group ? `apis/${group}/${version}` : `api/${version}`;
  const doc = JSON.parse(readFileSync(join(specDir, `${key.replaceAll("/", "__")}_openapi.json`), "utf8"));
  const all: Record<string, any> = doc.components.schemas;
  const kinds: Record<string, string> = {};
  for (const def of builtins.filter((d) => d.group === group && d.versions[0] === version)) {
    const name = Object.keys(all).find((n) => (all[n]["x-kubernetes-group-version-kind"] ?? []).some((g: any) => g.group === group && g.version === version && g.kind === def.kind));
    if (!name) throw new Error(`no schema for ${gv} ${def.kind}`);
    kinds[def.kind] = name;
  }
  const closure = new Set<string>();
  const visit = (name: string) => {
    if (closure.has(name)) return;
    closure.add(name);
    schemas[name] = all[name];
    JSON.stringify(all[name], (k, v) => { if (k === "$ref" && typeof v === "string") visit(v.replace("#/components/schemas/", "")); return v; });
  };
  Object.values(kinds).forEach(visit);
  groupVersions[key] = { kinds, closure: [...closure].sort() };
}
const json = JSON.stringify({ schemas, groupVersions });
writeFileSync(out, Bun.gzipSync(new TextEncoder().encode(json), { level: 9 }));
console.log(`wrote ${out}: ${Object.keys(schemas).length} schemas of ${Object.keys(groupVersions).length} group-versions, ${json.length} bytes of JSON`);
