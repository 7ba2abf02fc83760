// resource.Quantity's canonical form, as kube-apiserver v1.37.2 writes stored quantities back
// (most pairs below checked against it in a Pod's resources; the rest follow the same rules).
import { expect, test } from "bun:test";
import { canonicalQuantity } from "../src/quantity.ts";

test("quantities read back canonical: integer mantissa, the largest suffix of their own format", () => {
  const cases: [unknown, string][] = [
    ["0.5", "500m"], ["1000m", "1"], ["1500m", "1500m"], ["1.1", "1100m"], ["0.1", "100m"], [1, "1"],
    ["1000", "1k"], [2000, "2k"], ["1.5Gi", "1536Mi"], ["0.5Gi", "512Mi"], ["1024Mi", "1Gi"], ["1000Mi", "1000Mi"],
    ["129e6", "129e6"], ["100M", "100M"], ["0", "0"], ["0.0000000001", "1n"],
  ];
  expect(cases.map(([q]) => canonicalQuantity(q))).toEqual(cases.map(([, c]) => c));
  expect(canonicalQuantity("lots")).toBe("lots");
});
