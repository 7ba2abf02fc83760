// resource.Quantity's canonical form, which kube-apiserver writes back for every quantity it
// stores (`cpu: "0.5"` reads back as `500m`, `1.5Gi` as `1536Mi`, `2000` as `2k`): an integer
// mantissa with the largest suffix of the quantity's own format (decimal SI, binary SI, or
// decimal exponent) that keeps it an integer, at nano precision rounded up.

const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, "": 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY: Record<string, number> = { Ki: 1, Mi: 2, Gi: 3, Ti: 4, Pi: 5, Ei: 6 };
const BINARY_SUFFIX = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
const DECIMAL_SUFFIX: Record<number, string> = {
  [-9]: "n", [-6]: "u", [-3]: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E",
};
const NANO = 10n ** 9n;
/** a quantity: a sign, digits, then an exponent or a suffix */
const QUANTITY = /^([+-]?)([0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE]([+-]?[0-9]+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$/;

const pow10 = (e: number) => 10n ** BigInt(e);

/** the canonical spelling of a quantity, or the input unchanged when it is not one */
export function canonicalQuantity(input: unknown): unknown {
  if (typeof input === "number") return canonicalQuantity(String(input));
  if (typeof input !== "string") return input;
  const m = QUANTITY.exec(input.trim());
  if (!m) return input;
  const [, sign, digits, exponent, suffix = ""] = m;
  const [whole = "", frac = ""] = digits!.split(".");
  let scale = -frac.length + (exponent !== undefined ? Number(exponent) : DECIMAL[suffix] ?? 0);
  let value = BigInt(`${whole}${frac}` || "0") * 1024n ** BigInt(BINARY[suffix] ?? 0);
  // in nanos, rounded up as Quantity does below its precision
  scale += 9;
  const nanos = scale >= 0 ? value * pow10(scale) : (value + pow10(-scale) - 1n) / pow10(-scale);
  if (nanos === 0n) return "0";
  const minus = sign === "-" ? "-" : "";
  if (BINARY[suffix] && nanos % NANO === 0n && nanos >= 1024n * NANO) {
    value = nanos / NANO;
    let k = 0;
    while (k < 6 && value % 1024n === 0n) { value /= 1024n; k++; }
    return `${minus}${value}${BINARY_SUFFIX[k]}`;
  }
  let e = -9;
  while (e < 18 && nanos % pow10(e + 3 + 9) === 0n) e += 3;
  const mantissa = nanos / pow10(e + 9);
  if (exponent !== undefined) return `${minus}${mantissa}${e ? `e${e}` : ""}`;
  return `${minus}${mantissa}${DECIMAL_SUFFIX[e]}`;
}

/** every quantity of a ResourceList (`{cpu: "0.5"}`), canonical, in place */
export function canonicalResources(list: unknown): void {
  if (typeof list !== "object" || list === null || Array.isArray(list)) return;
  const o = list as Record<string, unknown>;
  for (const k of Object.keys(o)) o[k] = canonicalQuantity(o[k]);
}
