// The order kube-apiserver gives a group's versions (k8s.io/apimachinery's kube-aware comparison),
// whose first is the group's preferred version in discovery.

/** v2, v1, v1beta2, v1beta1, v1alpha1 (GA, beta, alpha; the higher number first), then other names in order. */
export function byVersionPriority(a: string, b: string): number {
  const rank = (v: string): [number, number, number] | undefined => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return undefined;
    const stage = m[2] === undefined ? 2 : m[2] === "beta" ? 1 : 0;
    return [stage, Number(m[1]), Number(m[3] ?? 0)];
  };
  const ra = rank(a), rb = rank(b);
  if (ra && rb) return rb[0] - ra[0] || rb[1] - ra[1] || rb[2] - ra[2];
  if (ra) return -1;
  if (rb) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}
