// Regenerates packages/sandbox/src/kube-openapi.json.gz: the OpenAPI v3 schemas of the built-in kinds the
// sandbox serves (what `kubectl explain` reads) and their OpenAPI v2 definitions (what `kubectl
// explain --output=plaintext-openapiv2` reads), as kube-apiserver v1.37.2 serves them: read from
// /openapi/v3 and /openapi/v2 of a throwaway test cluster (test/cluster), not from the module's
// api/openapi-spec, which is generated without the server's enums ("Possible enum values").
// Each pruned to what is reachable from those kinds, gzipped.
//
//   bun test/cluster/gen-openapi.ts          # after test/cluster/build.sh

import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { ResourceRegistry } from "../../packages/sandbox/src/resources.ts";
import { startCluster } from "./cluster.ts";

const out = resolve(import.meta.dir, "../../packages/sandbox/src/kube-openapi.json.gz");
const cluster = await startCluster({ controllerManager: false });
const get = async (path: string) => {
  const res = await fetch(`${cluster.url}${path}`, { headers: { authorization: `Bearer ${cluster.token}`, accept: "application/json" }, tls: { ca: cluster.caPem } });
  if (!res.ok) throw new Error(`GET ${path}: ${res.status}`);
  return res.json() as Promise<any>;
};

/** `name` and every schema it refers to (by `prefix` + name), from `all` into `into` */
function closure(name: string, all: Record<string, any>, prefix: string, into: Record<string, any>): void {
  if (into[name]) return;
  if (!all[name]) throw new Error(`no schema ${name}`);
  into[name] = all[name];
  JSON.stringify(all[name], (k, v) => { if (k === "$ref" && typeof v === "string") closure(v.replace(prefix, ""), all, prefix, into); return v; });
}

try {
  const schemas: Record<string, any> = {};
  const definitions: Record<string, any> = {};
  const groupVersions: Record<string, { kinds: Record<string, string> }> = {};
  const swagger = await get("/openapi/v2");
  const builtins = new ResourceRegistry().all().filter((d) => !d.crdName);
  for (const gv of new Set(builtins.map((d) => `${d.group}/${d.versions[0]}`))) {
    const [group, version] = gv.split("/") as [string, string];
    const key = group ? `apis/${group}/${version}` : `api/${version}`;
    const all: Record<string, any> = (await get(`/openapi/v3/${key}`)).components.schemas;
    const kinds: Record<string, string> = {};
    for (const def of builtins.filter((d) => d.group === group && d.versions[0] === version)) {
      const name = Object.keys(all).find((n) => (all[n]["x-kubernetes-group-version-kind"] ?? []).some((g: any) => g.group === group && g.version === version && g.kind === def.kind));
      if (!name) throw new Error(`no schema for ${gv} ${def.kind}`);
      kinds[def.kind] = name;
      closure(name, all, "#/components/schemas/", schemas);
      // v2 names its definitions as v3 names its schemas
      closure(name, swagger.definitions, "#/definitions/", definitions);
    }
    groupVersions[key] = { kinds };
  }
  const json = JSON.stringify({ schemas, groupVersions, definitions });
  writeFileSync(out, Bun.gzipSync(new TextEncoder().encode(json), { level: 9 }));
  console.log(`wrote ${out}: ${Object.keys(schemas).length} schemas, ${Object.keys(definitions).length} v2 definitions, of ${Object.keys(groupVersions).length} group-versions, ${json.length} bytes of JSON`);
} finally {
  await cluster.stop();
}
