// The bare-client floor of bench/real.ts: the requests the example operator makes for N new
// objects and nothing else (no watch, queue, handler registry or bookkeeping logic): one paged
// LIST, then per object a finalizer PATCH and a /status PATCH with the result and the diff base,
// 100 at a time, each response parsed as JSON. Compiled like kobun (`Bun.build`, minify).
//
//   floor --server URL --ca FILE --token-file FILE --namespace NS
//
// Then idles until SIGTERM, as an operator would (so it is measured like one); exits 1 on any
// failed request.

import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: { server: { type: "string" }, ca: { type: "string" }, "token-file": { type: "string" }, namespace: { type: "string" } },
});
if (!values.server || !values.ca || !values["token-file"] || !values.namespace) {
  console.error("usage: floor --server URL --ca FILE --token-file FILE --namespace NS");
  process.exit(2);
}
const tls = { ca: readFileSync(values.ca, "utf8") };
const authorization = `Bearer ${readFileSync(values["token-file"], "utf8").trim()}`;
const base = `${values.server}/apis/kobun.dev/v1/namespaces/${values.namespace}/kobunexamples`;
const FINALIZER = "kobun.dev/finalizer";

interface Example { metadata: { name: string; resourceVersion: string; finalizers?: string[] }; spec?: unknown }

async function call(method: string, url: string, body?: unknown): Promise<any> {
  const response = await fetch(url, {
    method, tls,
    headers: { authorization, accept: "application/json", ...(body ? { "content-type": "application/merge-patch+json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const parsed = await response.json();
  if (!response.ok) throw new Error(`${method} ${url}: HTTP ${response.status}`);
  return parsed;
}

async function handle(object: Example): Promise<void> {
  const { name, resourceVersion, finalizers = [] } = object.metadata;
  const patched: Example = await call("PATCH", `${base}/${name}`, {
    metadata: { resourceVersion, finalizers: [...finalizers, FINALIZER] },
  });
  const greeting = `hello ${patched.metadata.name}`;
  await call("PATCH", `${base}/${name}/status`, {
    status: { greeting, create_fn: { message: greeting }, kobun: { lastHandledConfiguration: JSON.stringify({ spec: patched.spec }) } },
  });
}

const objects: Example[] = [];
let token = "";
do {
  const page = await call("GET", `${base}?limit=500${token ? `&continue=${encodeURIComponent(token)}` : ""}`);
  objects.push(...page.items);
  token = page.metadata?.continue ?? "";
} while (token);

let next = 0;
const lane = async (): Promise<void> => {
  while (next < objects.length) await handle(objects[next++]!);
};
try {
  await Promise.all(Array.from({ length: 100 }, lane));
} catch (error) {
  console.error(`floor: ${(error as Error).message}`);
  process.exit(1);
}
process.on("SIGTERM", () => process.exit(0));
setInterval(() => {}, 1 << 30);
