// Renders kobun.example.yaml from the settings schema: every key with its default and a
// comment saying what it does. A test keeps the file at the repository root equal to this.

import type { Node, Section } from "./fields.ts";
import { renderResourcesExample } from "./resources.ts";
import { SETTINGS_SCHEMA } from "./schema.ts";

const HEADER = [
  "# kobun.example.yaml: every setting of kobun with its default value.",
  "# Generated from src/config/schema.ts by renderExampleConfig(); do not edit by hand.",
  "# Copy what you need into kobun.yaml; command-line flags override this file.",
  '# Durations: "250ms", "30s", "5m", "1h", "1m30s", or a plain number of seconds.',
];

/** The full example config file, as YAML text ending in a newline. */
export function renderExampleConfig(): string {
  const lines = [...HEADER];
  for (const [key, node] of Object.entries(SETTINGS_SCHEMA.fields)) {
    lines.push("");
    renderNode(key, node, 0, lines);
  }
  lines.push("");
  renderResourcesExample(lines);
  return `${lines.join("\n")}\n`;
}

function renderNode(key: string, node: Node, depth: number, lines: string[]): void {
  const indent = "  ".repeat(depth);
  lines.push(`${indent}# ${node.doc}`);
  if (node.kind === "field") {
    lines.push(`${indent}${key}: ${node.toYaml(node.default)}`);
    return;
  }
  lines.push(`${indent}${key}:`);
  for (const [childKey, child] of Object.entries((node as Section<Record<string, Node>>).fields)) {
    renderNode(childKey, child, depth + 1, lines);
  }
}
