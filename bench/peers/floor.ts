// The bare-client floor of bench/real.ts: the requests the example operator makes for N new
// objects and nothing else (no watch, queue, handler registry or bookkeeping logic): one paged
// LIST, then per object a finalizer PATCH and a /status PATCH with the result and the diff base,
// 100 at a time, each response parsed as JSON. Compiled like kobun (`Bun.build`, minify).
// With --same-requests it makes every request kobun makes and reads every answer kobun reads:
// also a WATCH from the LIST's resourceVersion whose every line is parsed (kobun sees its own
// two PATCHes come back on it), and per object one Event POST shaped as kobun's, whose answer
// is read but not parsed (as kobun's poster does).
//
//   floor --server URL --ca FILE --token-file FILE --namespace NS [--same-requests] [--protocol http2|http1.1]
//
// Then idles until SIGTERM, as an operator would (so it is measured like one); exits 1 on any
// failed request.

import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: { server: { type: "string" }, ca: { type: "string" }, "token-file": { type: "string" }, namespace: { type: "string" }, "same-requests": { type: "boolean", default: false }, protocol: { type: "string", default: "http1.1" } },
});
if (!values.server || !values.ca || !values["token-file"] || !values.namespace) {
  console.error("usage: floor --server URL --ca FILE --token-file FILE --namespace NS");
  process.exit(2);
}
if (values.protocol !== "http2" && values.protocol !== "http1.1") {
  console.error(`floor: --protocol is http2 or http1.1, not "${values.protocol}"`);
  process.exit(2);
}
const protocol = values.protocol;
const tls = { ca: readFileSync(values.ca, "utf8") };
const authorization = `Bearer ${readFileSync(values["token-file"], "utf8").trim()}`;
const base = `${values.server}/apis/kobun.dev/v1/namespaces/${values.namespace}/kobunexamples`;
const FINALIZER = "kobun.dev/finalizer";

interface Example { apiVersion?: string; kind?: string; metadata: { name: string; uid?: string; resourceVersion: string; finalizers?: string[] }; spec?: unknown }
const sameRequests = values["same-requests"] === true;
const events = `${values.server}/api/v1/namespaces/${values.namespace}/events`;
let sequence = 0;

async function call(method: string, url: string, body?: unknown): Promise<any> {
  const response = await fetch(url, {
    method, tls, protocol,
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
  const done: Example = await call("PATCH", `${base}/${name}/status`, {
    status: { greeting, create_fn: { message: greeting }, kobun: { lastHandledConfiguration: JSON.stringify({ spec: patched.spec }) } },
  });
  if (sameRequests) await postEvent(done);
}

/** The Event kobun posts for a handler that succeeded; its answer is read, not parsed. */
async function postEvent(object: Example): Promise<void> {
  const at = new Date().toISOString();
  const name = `${object.metadata.name}.${Date.now().toString(16)}${(sequence++ & 0xffffff).toString(16).padStart(6, "0")}`;
  const response = await fetch(events, {
    method: "POST", tls, protocol,
    headers: { authorization, accept: "application/json", "content-type": "application/json" },
    body: JSON.stringify({
      apiVersion: "v1", kind: "Event", metadata: { name, namespace: values.namespace },
      involvedObject: { apiVersion: object.apiVersion, kind: object.kind, name: object.metadata.name, namespace: values.namespace, uid: object.metadata.uid, resourceVersion: object.metadata.resourceVersion },
      reason: "Logging", message: "Handler 'create_fn' succeeded.", type: "Normal",
      source: { component: "kobun" }, reportingComponent: "kobun", reportingInstance: "kobun",
      firstTimestamp: at, lastTimestamp: at, eventTime: null, count: 1,
    }),
  });
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`POST ${events}: HTTP ${response.status}`);
}

/** Follows the objects from `resourceVersion`, parsing every line, until the process ends. */
async function watch(resourceVersion: string): Promise<void> {
  const response = await fetch(`${base}?watch=1&allowWatchBookmarks=true&resourceVersion=${resourceVersion}`, { tls, protocol, headers: { authorization, accept: "application/json" } });
  if (!response.ok || !response.body) throw new Error(`WATCH ${base}: HTTP ${response.status}`);
  const decoder = new TextDecoder();
  let rest = "";
  for await (const chunk of response.body) {
    rest += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = rest.indexOf("\n")) >= 0) {
      JSON.parse(rest.slice(0, end));
      rest = rest.slice(end + 1);
    }
  }
}

const objects: Example[] = [];
let token = "";
let listedVersion = "";
do {
  const page = await call("GET", `${base}?limit=500${token ? `&continue=${encodeURIComponent(token)}` : ""}`);
  objects.push(...page.items);
  token = page.metadata?.continue ?? "";
  listedVersion = page.metadata?.resourceVersion ?? listedVersion;
} while (token);
if (sameRequests) {
  watch(listedVersion).catch((error) => {
    console.error(`floor: ${(error as Error).message}`);
    process.exit(1);
  });
}

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
