// YAML as kube-apiserver reads a body (sigs.k8s.io/yaml, on go-yaml v2): YAML 1.1's plain scalars, so `y`, `yes`,
// `on`, `No`, `off` are booleans, `010` is octal, `0b11` binary; but no timestamps (`2001-12-14` stays a string) and
// no sexagesimal numbers (`1:20` stays a string); go-yaml's `0o17` octal too. A boolean key becomes its text
// ("false"), as the conversion to JSON writes it.

import { parse, type ScalarTag } from "yaml";

const octal: ScalarTag = {
  identify: (value) => typeof value === "number",
  default: true,
  tag: "tag:yaml.org,2002:int",
  test: /^[-+]?0o[0-7_]+$/,
  resolve: (text) => (text.startsWith("-") ? -1 : 1) * parseInt(text.replace(/^[-+]?0o/, "").replace(/_/g, ""), 8),
};

const OPTIONS = {
  version: "1.1" as const,
  customTags: (tags: any[]) =>
    [...tags.filter((t) => !String(t.tag).endsWith(":timestamp") && t.format !== "TIME"), octal],
};

/** a YAML document as kube-apiserver reads it (throws the parser's error) */
export function parseKubeYaml(text: string): unknown {
  return parse(text, OPTIONS);
}
