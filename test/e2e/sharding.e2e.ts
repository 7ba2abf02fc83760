// `shardSelector` (KEP-5866) on LIST and WATCH: the sandbox against a real kube-apiserver
// started with `--feature-gates=ShardedListAndWatch=true`, and both without it. Each server's
// answer is held to the same fixed truth: the objects whose 64-bit FNV-1a hash of uid (or
// namespace), computed here by src/sharding, falls in the ranges; the normalised echo in
// `metadata.shardInfo.selector`; the real server's Status for malformed selectors (a 500 with
// no reason, worded as v1.37.2 words it).
//
//   cd test/e2e && KOBUN_E2E_TARGET=cluster bun test ./sharding.e2e.ts

import { describe, expect, test } from "bun:test";
import { KubeClient } from "../../src/kube/client.ts";
import type { KubeObject, ObjectList, Resource } from "../../src/kube/types.ts";
import { objectHash, type ShardKey } from "../../src/sharding/hash.ts";
import { inRanges, mergedRanges, shardRange } from "../../src/sharding/ranges.ts";
import { buildShardSelector, parseShardSelector, serverApplied } from "../../src/sharding/selector.ts";
import { createNamespace, rawWatch } from "./harness/kube.ts";
import { targetSuite } from "./harness/suite.ts";
import { selectedTargets, type Target, type TargetName } from "./harness/target.ts";

const CONFIGMAPS: Resource = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true, statusSubresource: false };
const GATE = ["--feature-gates=ShardedListAndWatch=true"];
const Z = "0x0000000000000000";
const HALF = "0x8000000000000000";
const END = "0x10000000000000000";

async function fill(client: KubeClient, ns: string, count: number, prefix = "cm"): Promise<KubeObject[]> {
  const made: KubeObject[] = [];
  for (let i = 0; i < count; i++) made.push(await client.create(CONFIGMAPS, ns, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `${prefix}-${i}` } }));
  return made;
}

/** One raw LIST page: the parsed body and its HTTP status (errors are not thrown: they are the subject). */
async function rawList(t: Target, path: string, query: Record<string, string>): Promise<{ code: number; body: any }> {
  const client = await KubeClient.connect({ kubeconfig: t.kubeconfigPath, retries: 0 });
  try {
    return { code: 200, body: await client.request("GET", path, { query }) };
  } catch (error) {
    const e = error as { code?: number; status?: unknown };
    if (typeof e.code !== "number") throw error;
    return { code: e.code, body: e.status };
  } finally {
    client.close();
  }
}

const uids = (objects: readonly KubeObject[]) => objects.map((o) => o.metadata.uid!).sort();

function expected(objects: readonly KubeObject[], selector: string, key: ShardKey = "uid"): string[] {
  const { ranges } = parseShardSelector(selector);
  return uids(objects.filter((o) => inRanges(objectHash(o, key), ranges)));
}

// Inputs and the real server's answers to them (kube-apiserver v1.37.2, probed).
const MALFORMED: [string, string][] = [
  [`shardRange(object.metadata.uid, '0x0', '${HALF}')`, `hexStart must be a 0x-prefixed 16-digit hex value, got "0x0" (did you mean "${Z}"?)`],
  [`shardRange(object.metadata.uid, 0x0, 0x80)`, "hexStart must be a string literal, got int64"],
  [`shardRange(object.metadata.name, '${Z}', '${HALF}')`, `unsupported field path "object.metadata.name"; supported: object.metadata.uid, object.metadata.namespace`],
  [`shardRange(object.metadata.uid, '${Z}', '0x20000000000000000')`, `hexEnd: 17-digit hex value must be '${END}' (2^64), got "0x20000000000000000"`],
  [`shardRange(object.metadata.uid, '${Z}', '0x1000000000000000000')`, `hexEnd: hex value too long (19 chars, max 17): "1000000000000000000"`],
  [`shardRange(object.metadata.uid, '${HALF}', '${HALF}')`, `shard range start ${HALF} must be less than end ${HALF}`],
  [`shardRange(object.metadata.uid, '${Z}', '${HALF}') || shardRange(object.metadata.namespace, '${HALF}', '${END}')`, `all shard ranges must use the same field, got "object.metadata.uid" and "object.metadata.namespace"`],
  [`shardRange(object.metadata.uid, '${Z}', '${HALF}') && shardRange(object.metadata.uid, '${Z}', '${HALF}')`, `unsupported function "_&&_"; only shardRange() and || are allowed`],
  [`shardRange(object.metadata.uid, '${Z}')`, "shardRange() requires exactly 3 arguments, got 2"],
  [`shardRange(object.metadata.uid, '${Z}', '${HALF}'`, "CEL parse error: Syntax error: missing ')' at '<EOF>'"],
  [`shardRange(object.metadata.uid, '0xAB', '${HALF}')`, `hexStart: invalid hex character "A" in "0xAB"`],
  [`shardRange(object.metadata.uid, '0X0', '${HALF}')`, `hexStart must have '0x' prefix, got "0X0"`],
  [`shardRange(object.metadata.uid, '${Z}', '0x')`, "hexEnd: hex value is required after '0x'"],
  [`shardRange(object.metadata.uid, '${Z}', true)`, "hexEnd must be a string literal, got bool"],
  [`shardRange('object.metadata.uid', '${Z}', '${HALF}')`, "shardRange() first argument: expected field path (e.g. object.metadata.uid), got expression kind 5"],
  ["foo", "unexpected expression kind 3; expected shardRange() call or || operator"],
  ["object.metadata.uid", "unexpected expression kind 7; expected shardRange() call or || operator"],
  [`shardRange(object.metadata.uid, '${Z}', '${HALF}') ||`, "CEL parse error: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}"],
  [`shardRange(object.metadata.uid, '${Z}', '${HALF}') ) `, "CEL parse error: Syntax error: extraneous input ')' expecting <EOF>"],
  [`shardRange(object.metadata.uid, '${Z}', '${HALF}') | x`, "CEL parse error: Syntax error: token recognition error at: '| '"],
  ["   ", "empty shard selector is not allowed; omit the parameter for unfiltered lists"],
];

describe.each(selectedTargets())("shardSelector with ShardedListAndWatch on %s", (targetName: TargetName) => {
  const need = targetSuite(targetName, { crds: [], cleanup: [], apiserverArgs: GATE });

  test("a LIST selects exactly the objects whose FNV-1a hash of metadata.uid is in the ranges, and echoes the applied selector", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-shard");
    const objects = await fill(t.client, ns, 40);
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    const built = [
      buildShardSelector("uid", [shardRange(0, 2)]),
      buildShardSelector("uid", [shardRange(1, 2)]),
      buildShardSelector("uid", mergedRanges([0, 2, 3], 4)),
      buildShardSelector("uid", [shardRange(1, 3), shardRange(0, 16)]),
    ];
    expect(built[2]).toBe(`shardRange(object.metadata.uid, '${Z}', '0x4000000000000000') || shardRange(object.metadata.uid, '${HALF}', '${END}')`);
    for (const selector of built) {
      const { code, body } = await rawList(t, path, { shardSelector: selector });
      expect(code).toBe(200);
      expect(body.metadata.shardInfo).toEqual({ selector });
      expect(serverApplied(selector, body.metadata)).toBe(true);
      expect(uids(body.items)).toEqual(expected(objects, selector));
    }
    // The two halves cover every object once.
    const halves = await Promise.all([0, 1].map((i) => rawList(t, path, { shardSelector: buildShardSelector("uid", [shardRange(i, 2)]) })));
    expect(halves[0]!.body.items.length + halves[1]!.body.items.length).toBe(40);
  }, 60_000);

  test("the echo is the normal form of what was sent: spaces, double quotes, raw strings and parentheses are normalised", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-shard");
    await fill(t.client, ns, 3);
    const cases: [string, string][] = [
      [`shardRange( object.metadata.uid , "${Z}" ,  r'${HALF}' )`, `shardRange(object.metadata.uid, '${Z}', '${HALF}')`],
      [`(shardRange(object.metadata.uid,'${Z}','${HALF}')||shardRange(object.metadata.uid,'${HALF}','${END}'))`, buildShardSelector("uid", [shardRange(0, 2), shardRange(1, 2)])],
    ];
    for (const [sent, echo] of cases) {
      const { code, body } = await rawList(t, `/api/v1/namespaces/${ns}/configmaps`, { shardSelector: sent });
      expect(code).toBe(200);
      expect(body.metadata.shardInfo.selector).toBe(echo);
    }
  }, 60_000);

  test("a namespace-keyed selector splits the namespaces by the FNV-1a hash of their names, across a cluster-wide LIST", async () => {
    const t = need();
    const namespaces = await Promise.all(Array.from({ length: 8 }, () => createNamespace(t.client, "e2e-shardns")));
    const objects: KubeObject[] = [];
    for (const ns of namespaces) objects.push(...(await fill(t.client, ns, 2)));
    for (const i of [0, 1]) {
      const selector = buildShardSelector("namespace", [shardRange(i, 2)]);
      const { body } = await rawList(t, "/api/v1/configmaps", { shardSelector: selector });
      expect(body.metadata.shardInfo).toEqual({ selector });
      const ours = (body as ObjectList).items.filter((o) => namespaces.includes(o.metadata.namespace!));
      expect(uids(ours)).toEqual(expected(objects, selector, "namespace"));
    }
  }, 60_000);

  test("paging keeps the selector: every page echoes it, and the pages together are the selected objects", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-shard");
    const objects = await fill(t.client, ns, 30);
    const selector = buildShardSelector("uid", [shardRange(0, 2)]);
    const got: KubeObject[] = [];
    let token: string | undefined;
    do {
      const { body } = await rawList(t, `/api/v1/namespaces/${ns}/configmaps`, { shardSelector: selector, limit: "4", ...(token ? { continue: token } : {}) });
      expect(body.metadata.shardInfo).toEqual({ selector });
      expect(body.metadata.remainingItemCount).toBeUndefined();
      got.push(...body.items);
      token = body.metadata.continue;
    } while (token);
    expect(uids(got)).toEqual(expected(objects, selector));
  }, 60_000);

  test("a WATCH delivers only the objects in its ranges: the initial events, then new ones", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-shard");
    const before = await fill(t.client, ns, 20, "old");
    const selector = buildShardSelector("uid", [shardRange(1, 2)]);
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    const initial = await rawWatch(t.client, path, { shardSelector: selector, sendInitialEvents: "true", resourceVersionMatch: "NotOlderThan", allowWatchBookmarks: "true" }, {
      until: (e) => e.type === "BOOKMARK" && e.object.metadata.annotations?.["k8s.io/initial-events-end"] === "true",
    });
    expect(initial.ended).toBe("until");
    expect(uids(initial.events.filter((e) => e.type === "ADDED").map((e) => e.object))).toEqual(expected(before, selector));

    const rv = (await t.client.list(CONFIGMAPS, { namespace: ns })).metadata!.resourceVersion!;
    const later = await fill(t.client, ns, 20, "new");
    // Then markers until one lands in range: events come in resourceVersion order, so once the
    // marker arrives every earlier event has, and what was delivered can be compared exactly.
    const { ranges } = parseShardSelector(selector);
    let marker: KubeObject;
    for (let i = 0; ; i++) {
      marker = await t.client.create(CONFIGMAPS, ns, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `marker-${i}` } });
      if (inRanges(objectHash(marker, "uid"), ranges)) break;
    }
    const live = await rawWatch(t.client, path, { shardSelector: selector, resourceVersion: rv }, { until: (e) => e.object?.metadata?.uid === marker.metadata.uid });
    expect(live.ended).toBe("until");
    const seen = live.events.filter((e) => e.type === "ADDED").map((e) => e.object.metadata.uid as string).sort();
    expect(seen).toEqual([...expected(later, selector), marker.metadata.uid!].sort());
  }, 60_000);

  test("a malformed shardSelector is refused with the real server's 500 Status and message, on LIST and on WATCH", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-shard");
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    for (const [selector, message] of MALFORMED) {
      const { code, body } = await rawList(t, path, { shardSelector: selector });
      expect({ selector, code, body }).toEqual({ selector, code: 500, body: { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message: `invalid shard selector: ${message}`, code: 500 } });
    }
    const [selector, message] = MALFORMED[0]!;
    const { code, body } = await rawList(t, path, { shardSelector: selector, watch: "true" });
    expect({ code, message: body.message }).toEqual({ code: 500, message: `invalid shard selector: ${message}` });
  }, 60_000);
});

describe.each(selectedTargets())("shardSelector without the feature gate on %s", (targetName: TargetName) => {
  const need = targetSuite(targetName, { crds: [], cleanup: [], sandbox: { shardSelectors: false } });

  test("the parameter is ignored: every object is listed and no echo tells the client it was applied", async () => {
    const t = need();
    const ns = await createNamespace(t.client, "e2e-shard");
    const objects = await fill(t.client, ns, 10);
    const selector = buildShardSelector("uid", [shardRange(0, 4)]);
    const { code, body } = await rawList(t, `/api/v1/namespaces/${ns}/configmaps`, { shardSelector: selector });
    expect(code).toBe(200);
    expect(body.metadata.shardInfo).toBeUndefined();
    expect(serverApplied(selector, body.metadata)).toBe(false);
    expect(uids(body.items)).toEqual(uids(objects));
  }, 60_000);
});
