// The hash that places an object in the hash space, exactly as KEP-5866's server-side
// sharding computes it (k8s.io/apimachinery/pkg/sharding): 64-bit FNV-1a over the UTF-8 bytes
// of `metadata.uid` or `metadata.namespace` (an absent namespace hashes as ""). The client-side
// filter must agree with the server bit for bit, or an object would belong to no replica.

import type { KubeObject } from "../kube/index.ts";

export type ShardKey = "uid" | "namespace";

const encoder = new TextEncoder();

/**
 * FNV-1a, 64-bit, of `value`'s UTF-8 bytes. Computed in four 16-bit limbs of plain numbers and
 * made a bigint once: a bigint multiply per byte cost every event of a sharded stream ~5 µs
 * (each is hashed by its replica's filter, and by the sandbox serving the ranges).
 */
export function fnv1a64(value: string): bigint {
  // uids and namespace names are ASCII, their own UTF-8: no encoding needed for them.
  const bytes = /^[\x00-\x7f]*$/.test(value) ? undefined : encoder.encode(value);
  const length = bytes ? bytes.length : value.length;
  // The offset basis 0xcbf29ce484222325, lowest limb first.
  let h0 = 0x2325, h1 = 0x8422, h2 = 0x9ce4, h3 = 0xcbf2;
  for (let i = 0; i < length; i++) {
    h0 ^= bytes ? bytes[i]! : value.charCodeAt(i);
    // × the prime 0x100000001b3 = 2^40 + 0x1b3, mod 2^64: limb 0's 0x1b3, and 0x100 at limb 2.
    const t0 = h0 * 0x1b3;
    const t1 = h1 * 0x1b3 + (t0 >>> 16);
    const t2 = h2 * 0x1b3 + h0 * 0x100 + (t1 >>> 16);
    h3 = (h3 * 0x1b3 + h1 * 0x100 + (t2 >>> 16)) & 0xffff;
    h0 = t0 & 0xffff;
    h1 = t1 & 0xffff;
    h2 = t2 & 0xffff;
  }
  return (BigInt(((h3 << 16) | h2) >>> 0) << 32n) | BigInt(((h1 << 16) | h0) >>> 0);
}

/** The hash of the object's shard key. */
export function objectHash(object: Pick<KubeObject, "metadata">, key: ShardKey): bigint {
  const value = key === "uid" ? object.metadata.uid : object.metadata.namespace;
  return fnv1a64(value ?? "");
}
