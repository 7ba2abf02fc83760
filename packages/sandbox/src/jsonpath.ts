// The JSONPath subset that CRD additionalPrinterColumns use (the apiextensions validation only
// allows simple paths): `.a.b`, `.a[0]`, `.a[*].b`, `.a['x.y']`, optionally wrapped in `{}`.

type Step = { key: string } | { index: number } | { all: true };

function parseSteps(path: string): Step[] | undefined {
  let p = path.trim();
  if (p.startsWith("{") && p.endsWith("}")) p = p.slice(1, -1).trim();
  if (p.startsWith("$")) p = p.slice(1);
  const steps: Step[] = [];
  const re = /\.([^.[\]]+)|\[(\d+)\]|\[\*\]|\['([^']*)'\]|\["([^"]*)"\]/y;
  let m: RegExpExecArray | null;
  while (re.lastIndex < p.length && (m = re.exec(p))) {
    if (m[1] !== undefined) steps.push({ key: m[1] });
    else if (m[2] !== undefined) steps.push({ index: Number(m[2]) });
    else if (m[3] !== undefined || m[4] !== undefined) steps.push({ key: (m[3] ?? m[4])! });
    else steps.push({ all: true });
  }
  return re.lastIndex === p.length || p.length === 0 ? steps : undefined;
}

/** every value the path selects in `obj` (none when it is malformed or leads nowhere) */
export function jsonPathValues(obj: unknown, path: string): unknown[] {
  const steps = parseSteps(path);
  if (!steps) return [];
  let current: unknown[] = [obj];
  for (const step of steps) {
    const next: unknown[] = [];
    for (const v of current) {
      if ("key" in step) {
        if (v && typeof v === "object" && !Array.isArray(v) && step.key in v) {
          next.push((v as Record<string, unknown>)[step.key]);
        }
      } else if ("index" in step) {
        if (Array.isArray(v) && step.index < v.length) next.push(v[step.index]);
      } else if (Array.isArray(v)) next.push(...v);
    }
    current = next;
  }
  return current;
}
