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

/**
 * a YAML document as kube-apiserver reads it; what it cannot read throws in sigs.k8s.io/yaml's form, "error
 * converting YAML to JSON: yaml: line N: reason" (the reason is the JS parser's: go-yaml's own words differ), one
 * line that quotes none of the body, where the parser's message shows the lines around the fault
 */
export function parseKubeYaml(text: string): unknown {
  try {
    return parse(text, OPTIONS);
  } catch (error) {
    const { message, linePos } = error as { message?: string; linePos?: { line: number }[] };
    const reason = String(message ?? error).split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "");
    const line = linePos?.[0] ? `line ${linePos[0].line}: ` : "";
    throw new Error(`error converting YAML to JSON: yaml: ${line}${reason.charAt(0).toLowerCase()}${reason.slice(1)}`);
  }
}
