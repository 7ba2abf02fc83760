// bun test/cluster/smoke.ts — end-to-end check of the test cluster: start it, hit /version,
// create a CRD and an object, watch from resourceVersion=1, print timings and RSS, stop.
// Not a *.test.ts on purpose: it needs the built binaries (test/cluster/build.sh).
import { spawnSync } from "node:child_process";
import { startCluster } from "./cluster.ts";

const t0 = performance.now();
const c = await startCluster();
const readyMs = performance.now() - t0;
console.log(`ready in ${(readyMs / 1000).toFixed(2)}s at ${c.url}`);

const api = async (path: string, init: RequestInit = {}, contentType = "application/json") => {
  const r = await fetch(`${c.url}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${c.token}`, "content-type": contentType },
    tls: { ca: c.caPem },
  });
  return r;
};

try {
  const v = await (await api("/version")).json();
  console.log("/version:", JSON.stringify(v));

  const crd = {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "kobunexamples.kobun.dev" },
    spec: {
      group: "kobun.dev",
      scope: "Namespaced",
      names: { plural: "kobunexamples", singular: "kobunexample", kind: "KobunExample", listKind: "KobunExampleList" },
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: {
              type: "object",
              properties: {
                spec: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
                status: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
              },
            },
          },
        },
      ],
    },
  };
  const t1 = performance.now();
  let r = await api("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", { method: "POST", body: JSON.stringify(crd) });
  console.log("create CRD:", r.status);
  // Wait until Established and the resource is actually served.
  for (;;) {
    const got = (await (await api("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/kobunexamples.kobun.dev")).json()) as {
      status?: { conditions?: { type: string; status: string }[] };
    };
    const established = got.status?.conditions?.some((x) => x.type === "Established" && x.status === "True");
    if (established && (await api("/apis/kobun.dev/v1/namespaces/default/kobunexamples")).ok) break;
    await Bun.sleep(50);
  }
  console.log(`CRD established+served in ${((performance.now() - t1) / 1000).toFixed(2)}s`);

  r = await api("/apis/kobun.dev/v1/namespaces/default/kobunexamples", {
    method: "POST",
    body: JSON.stringify({ apiVersion: "kobun.dev/v1", kind: "KobunExample", metadata: { name: "ex1" }, spec: { a: 1 } }),
  });
  const obj = (await r.json()) as { metadata: { resourceVersion: string } };
  console.log("create object:", r.status, "rv", obj.metadata.resourceVersion);

  r = await api(
    `/apis/kobun.dev/v1/namespaces/default/kobunexamples/ex1/status`,
    { method: "PATCH", body: JSON.stringify({ status: { phase: "ok" } }) },
    "application/merge-patch+json",
  );
  console.log("patch status:", r.status, JSON.stringify(((await r.json()) as { status?: unknown }).status));

  for (const rv of ["1", obj.metadata.resourceVersion]) {
    const path = `/apis/kobun.dev/v1/namespaces/default/kobunexamples?watch=1&resourceVersion=${rv}`;
    const ctl = new AbortController();
    const wr = await api(path, { signal: ctl.signal });
    console.log(`watch ${path}: HTTP ${wr.status} ${wr.headers.get("content-type")}`);
    const reader = wr.body!.getReader();
    const timer = setTimeout(() => ctl.abort(), 3000);
    let text = "";
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
        if (text.includes("\n")) break;
      }
    } catch {}
    clearTimeout(timer);
    ctl.abort();
    console.log(`first line: ${text.split("\n")[0] || "(nothing within 3s)"}`);
  }

  const ps = spawnSync("ps", ["-o", "pid=,rss=,comm=", "--ppid", String(process.pid)], { encoding: "utf8" });
  console.log("RSS (KiB) of children:\n" + ps.stdout.trimEnd());
} finally {
  const t2 = performance.now();
  await c.stop();
  console.log(`stopped in ${((performance.now() - t2) / 1000).toFixed(2)}s`);
}
