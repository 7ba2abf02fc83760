// resourceVersion ordering, written once. API convention calls resource versions opaque:
// clients may only compare them for equality. kobun orders them anyway, in this one place,
// because every kube-apiserver stores objects in etcd3, whose resourceVersion is the decimal
// etcd revision: one counter for the whole store, so a larger number is a later write of any
// object (the watch cache and the sandbox keep that contract). A version that is not plain
// decimal (another storage) has no order here: callers then fall back to equality.

/** -1, 0 or 1 as `a` is older than, the same as, or newer than `b`; undefined when either is not decimal. */
export function compareResourceVersions(a: string, b: string): -1 | 0 | 1 | undefined {
  if (!isDecimal(a) || !isDecimal(b)) return undefined;
  // Without leading zeros a longer number is larger; same length compares as text (no BigInt).
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return a === b ? 0 : a < b ? -1 : 1;
}

/** `held` is `wanted` or later; equal only, when either has no order. */
export function notOlder(held: string, wanted: string): boolean {
  const order = compareResourceVersions(held, wanted);
  return order === undefined ? held === wanted : order >= 0;
}

function isDecimal(s: string): boolean {
  if (s.length === 0 || (s.length > 1 && s.charCodeAt(0) === 48)) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}
