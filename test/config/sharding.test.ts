// `sharding: { replicas: auto | N, shards, key }` from kobun.yaml and from flags, validated.
import { expect, test } from "bun:test";
import { ConfigError, parseRunFlags, resolveSettings } from "../../src/config/index.ts";

function problems(fileData: unknown, argv: string[] = []): string[] {
  try {
    resolveSettings({ file: "kobun.yaml", fileData, flags: parseRunFlags(argv).flags });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).message.split("\n");
  }
  return [];
}

test("by default there is no sharding: one replica, 24 shards by uid", () => {
  expect(resolveSettings({ fileData: null }).sharding).toEqual({ replicas: 1, shards: 24, key: "uid", enabled: false });
});

test("replicas is auto or a count; either turns sharding on", () => {
  expect(resolveSettings({ fileData: { sharding: { replicas: "auto" } } }).sharding).toEqual({ replicas: "auto", shards: 24, key: "uid", enabled: true });
  expect(resolveSettings({ fileData: { sharding: { replicas: 3, shards: 12, key: "namespace" } } }).sharding).toEqual({ replicas: 3, shards: 12, key: "namespace", enabled: true });
});

test("flags override the file: --replicas, --shards, --shard-key", () => {
  const { flags } = parseRunFlags(["--replicas", "auto", "--shards=32", "--shard-key", "namespace"]);
  expect(resolveSettings({ fileData: { sharding: { replicas: 2 } }, flags }).sharding).toEqual({ replicas: "auto", shards: 32, key: "namespace", enabled: true });
  expect(resolveSettings({ flags: parseRunFlags(["--replicas=4"]).flags, fileData: null }).sharding.replicas).toBe(4);
  expect(() => parseRunFlags(["--shards", "many"])).toThrow(ConfigError);
});

test("bad values are named with what was expected", () => {
  expect(problems({ sharding: { replicas: "all" } })).toEqual(['kobun.yaml: sharding.replicas: expected "auto" or an integer from 1 to 1000, got "all"']);
  expect(problems({ sharding: { shards: 0, key: "name" } })).toEqual([
    "kobun.yaml: sharding.shards: expected an integer from 1 to 4096, got 0",
    'kobun.yaml: sharding.key: expected one of "uid", "namespace", got "name"',
  ]);
  expect(problems(null, ["--replicas", "0"])).toEqual(['--replicas: expected "auto" or an integer from 1 to 1000, got "0"']);
});

test("fewer shards than replicas, or sharding in lease mode, is refused", () => {
  expect(problems({ sharding: { replicas: 5, shards: 4 } })).toEqual(["kobun.yaml: sharding.shards: expected at least sharding.replicas (5), so that every replica owns a shard; got 4"]);
  expect(problems({ sharding: { replicas: "auto" }, peering: { mode: "lease" } })).toEqual([
    'kobun.yaml: sharding.replicas: sharding cannot be combined with peering.mode "lease" (one active replica); use peering.mode "peering" with sharding, or sharding.replicas: 1',
  ]);
});

test("shard Leases use peering.lease's timings: handlers must stop before a shard's lease can expire", () => {
  expect(problems({ sharding: { replicas: 3 }, peering: { freezeGracePeriod: "5s" } })).toEqual([
    "kobun.yaml: peering.freezeGracePeriod: expected less than peering.lease.duration - peering.lease.renewDeadline (5s) with sharding (shard Leases use peering.lease's timings), so that handlers stop before the lease can expire; got 5s",
  ]);
  expect(problems({ peering: { freezeGracePeriod: "5s" } })).toEqual([]);
});
