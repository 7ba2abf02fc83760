// `shardSelector` (KEP-5866) on the sandbox's LIST and WATCH: the FNV-1a ranges, the echo in
// `metadata.shardInfo`, the real server's 500s for malformed selectors, and the switch that makes
// the sandbox a server without the feature gate. test/e2e/sharding.e2e.ts holds it to kube-apiserver.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startSandbox, type Sandbox } from "@kobun/sandbox";
import { fnv1a64 } from "../../src/sharding/hash.ts";
import { api, cm, CM, WatchReader } from "../../packages/sandbox/test/helpers.ts";

const Z = "0x0000000000000000";
const HALF = "0x8000000000000000";
const END = "0x10000000000000000";
const LOW = `shardRange(object.metadata.uid, '${Z}', '${HALF}')`;
const HIGH = `shardRange(object.metadata.uid, '${HALF}', '${END}')`;

let sb: Sandbox;
let off: Sandbox;
const uidsOf = (items: any[]) => items.map((i) => i.metadata.uid).sort();
let all: any[] = [];
beforeAll(async () => {
  sb = await startSandbox();
  off = await startSandbox({ shardSelectors: false });
  for (let i = 0; i < 24; i++) await api(sb, "POST", CM, cm(`c${i}`));
  for (let i = 0; i < 3; i++) await api(off, "POST", CM, cm(`c${i}`));
  all = (await api(sb, "GET", CM)).body.items;
});
afterAll(async () => { await sb.stop(); await off.stop(); });

const select = (selector: string, sandbox = sb) => api(sandbox, "GET", `${CM}?shardSelector=${encodeURIComponent(selector)}`);
const low = () => uidsOf(all.filter((o) => fnv1a64(o.metadata.uid) < BigInt(HALF)));

test("a uid range selects the objects whose FNV-1a hash of metadata.uid is in [start, end), and the list echoes the selector", async () => {
  const r = await select(LOW);
  expect(r.status).toBe(200);
  expect(r.body.metadata.shardInfo).toEqual({ selector: LOW });
  expect(uidsOf(r.body.items)).toEqual(low());
  expect(low().length).toBeGreaterThan(0);
  expect(low().length).toBeLessThan(24);
});

test("ranges joined by || select their union; the echo is normalised (spaces, quotes, parentheses)", async () => {
  const r = await select(`(shardRange( object.metadata.uid ,"${Z}", r'${HALF}')||${HIGH})`);
  expect(r.body.metadata.shardInfo.selector).toBe(`${LOW} || ${HIGH}`);
  expect(r.body.items.length).toBe(24);
});

test("a namespace range hashes metadata.namespace", async () => {
  const inLow = fnv1a64("default") < BigInt(HALF);
  const r = await select(`shardRange(object.metadata.namespace, '${Z}', '${HALF}')`);
  expect(r.body.items.length).toBe(inLow ? 24 : 0);
});

test("a malformed selector is a 500 Status without a reason, worded as kube-apiserver words it, on LIST and WATCH", async () => {
  const r = await select(`shardRange(object.metadata.uid, '0x0', '${HALF}')`);
  expect(r.status).toBe(500);
  expect(r.body).toEqual({ kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", code: 500,
    message: `invalid shard selector: hexStart must be a 0x-prefixed 16-digit hex value, got "0x0" (did you mean "${Z}"?)` });
  const w = await api(sb, "GET", `${CM}?watch=true&shardSelector=${encodeURIComponent(`${LOW} && ${LOW}`)}`);
  expect(w.status).toBe(500);
  expect(w.body.message).toBe(`invalid shard selector: unsupported function "_&&_"; only shardRange() and || are allowed`);
  expect((await select(`${LOW} || shardRange(object.metadata.namespace, '${Z}', '${HALF}')`)).body.message)
    .toBe(`invalid shard selector: all shard ranges must use the same field, got "object.metadata.uid" and "object.metadata.namespace"`);
  expect((await select(`${LOW} ||`)).body.message).toStartWith("invalid shard selector: CEL parse error: Syntax error: mismatched input '<EOF>' expecting {");
});

test("an empty parameter is no selector; a blank one is refused", async () => {
  const r = await api(sb, "GET", `${CM}?shardSelector=`);
  expect(r.body.items.length).toBe(24);
  expect(r.body.metadata.shardInfo).toBeUndefined();
  expect((await select("  ")).body.message).toBe("invalid shard selector: empty shard selector is not allowed; omit the parameter for unfiltered lists");
});

test("a WATCH with a selector sends only the objects in its ranges", async () => {
  const rv = (await api(sb, "GET", CM)).body.metadata.resourceVersion;
  const reader = await WatchReader.open(sb, `${CM}?watch=true&resourceVersion=${rv}&shardSelector=${encodeURIComponent(HIGH)}`);
  const made: any[] = [];
  for (let i = 0; i < 12; i++) made.push((await api(sb, "POST", CM, cm(`w${i}`))).body);
  const wanted = uidsOf(made.filter((o) => fnv1a64(o.metadata.uid) >= BigInt(HALF)));
  const got: string[] = [];
  while (got.length < wanted.length) got.push((await reader.next(5000)).object.metadata.uid);
  expect(got.sort()).toEqual(wanted);
  reader.close();
  for (const o of made) await api(sb, "DELETE", `${CM}/${o.metadata.name}`);
});

test("without the feature gate the parameter is ignored: everything is listed, no echo", async () => {
  const r = await select(`shardRange(object.metadata.uid, '0x0', '0x1')`, off);
  expect(r.status).toBe(200);
  expect(r.body.items.length).toBe(3);
  expect(r.body.metadata.shardInfo).toBeUndefined();
});
