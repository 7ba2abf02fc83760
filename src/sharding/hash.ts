// The hash that places an object in the hash space, exactly as KEP-5866's server-side
// sharding computes it (k8s.io/apimachinery/pkg/sharding): 64-bit FNV-1a over the UTF-8 bytes
// of `metadata.uid` or `metadata.namespace` (an absent namespace hashes as ""). The client-side
// filter must agree with the server bit for bit, or an object would belong to no replica.

import type { KubeObject } from "../kube/types.ts";

export type ShardKey = "uid" | "namespace";

const OFFSET_BASIS = 0xcbf29ce484222325n;
const PRIME = 0x100000001b3n;
const MASK = (1n << 64n) - 1n;
const encoder = new TextEncoder();

/** FNV-1a, 64-bit, of `value`'s UTF-8 bytes. */
export function fnv1a64(value: string): bigint {
  let hash = OFFSET_BASIS;
  for (const byte of encoder.encode(value)) hash = ((hash ^ BigInt(byte)) * PRIME) & MASK;
  return hash;
}

/** The hash of the object's shard key. */
export function objectHash(object: Pick<KubeObject, "metadata">, key: ShardKey): bigint {
  const value = key === "uid" ? object.metadata.uid : object.metadata.namespace;
  return fnv1a64(value ?? "");
}
